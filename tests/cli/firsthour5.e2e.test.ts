/**
 * Hunt 5's first hour (prof/hunt5-firsthour.md), the checks that need no running serve:
 * what `webhook test` renders for a payload naming no event, `--send` keeping a built-in
 * sample away from a real repository, hints that carry the `--config-dir` in use, what
 * `update` prints when it is refused, the alert-sender filters, the public_url note, and
 * `status`'s columns.
 */
import { buildCli, hkIn, runCli, tempConfigDir } from '../support/cli';
import { startLocalServer } from '../support/local-http';
import { filteredRow } from '../../cli/webhook/filtered';

beforeAll(() => buildCli(), 60_000);

const hk = hkIn;
const dir = (yaml = '') => tempConfigDir(yaml, 'hookagent-firsthour5-');

describe('webhook test on a custom payload (D2)', () => {
  const d = dir();
  beforeAll(async () => {
    expect((await hk(d, 'webhook', 'subscribe', 'deploys', '--events', 'deploy.done', '--prompt', 'Deployed {service}')).code).toBe(0);
  });

  test('a payload naming no event is the `custom` event the service makes of it: the filters do not take it', async () => {
    const unnamed = await hk(d, 'webhook', 'test', 'deploys', '--payload', '{"service":"api"}');
    expect(unnamed.code).toBe(0);
    expect(unnamed.stdout).toContain('Deployed api');
    expect(unnamed.stdout).toContain('Event filters (no match: this event would NOT reach the subscription; it would be answered 200 "Event not handled"):');
    const named = await hk(d, 'webhook', 'test', 'deploys', '--payload', '{"event_type":"deploy.done","service":"api"}');
    expect(named.stdout).toContain('Deployed api');
    expect(named.stdout).not.toContain('Event filters (no match');
  });

  test('--dry-run names the event the service would give the payload, and says when the filters do not take it', async () => {
    const unnamed = await hk(d, 'webhook', 'test', 'deploys', '--payload', '{"service":"api"}', '--dry-run');
    expect(unnamed.stdout.split('\n')[0]).toBe("Dry run of 'deploys' on a --payload custom event with provider echo (nothing is delivered or recorded).");
    expect(unnamed.stdout).toContain('Event filters (no match');
    const named = await hk(d, 'webhook', 'test', 'deploys', '--payload', '{"event_type":"deploy.done","service":"api"}', '--dry-run');
    expect(named.stdout.split('\n')[0]).toContain('on a --payload deploy.done event');
    expect(named.stdout).not.toContain('Event filters (no match');
  });

  test('without --payload and no shipped sample, the filter\'s own event is rendered (no false "no match")', async () => {
    const stub = await hk(d, 'webhook', 'test', 'deploys');
    expect(stub.stdout).not.toContain('Event filters (no match');
  });
});

describe('test --send with a built-in sample and codehost_comment (D4)', () => {
  const yaml = 'webhooks:\n  github: { secret: ${GH_SECRET} }\ndelivery:\n  codehost:\n    github: { token: ${GITHUB_TOKEN} }\n';
  const env = { GH_SECRET: 'gh-secret', GITHUB_TOKEN: 'ghp_fake0123456789' };

  test('refuses before anything is posted and says what to do instead', async () => {
    const d = dir(yaml);
    const service = await startLocalServer((_req, res) => void res.writeHead(202, { 'content-type': 'application/json' }).end('{"status":"accepted"}'));
    try {
      expect((await runCli(['--config-dir', d, 'webhook', 'subscribe', 'pr-review', '--events', 'pull_request.opened', '--deliver', 'codehost_comment', '--prompt', 'Review {pull_request.html_url}'], env)).code).toBe(0);
      const sent = await runCli(['--config-dir', d, 'webhook', 'test', 'pr-review', '--send', '--url', service.url], env);
      expect(sent.code).toBe(1);
      expect(sent.stderr).toContain("Not sent: the built-in sample is a pull_request.opened event of Codertocat/Hello-World, a real repository: 'pr-review' delivers to codehost_comment");
      expect(sent.stderr).toMatch(/pass --payload <file> with one of your own deliveries \(GitHub: the webhook's Recent Deliveries/);
      expect(sent.stderr).toContain(`'npx hookagent --config-dir ${d} webhook test pr-review --dry-run'`);
      expect(service.requests).toHaveLength(0);
      // The user's own delivery is sent as given.
      const own = JSON.stringify({ action: 'opened', number: 7, pull_request: { number: 7, html_url: 'https://github.com/me/mine/pull/7' }, repository: { full_name: 'me/mine', name: 'mine', owner: { login: 'me' } } });
      const mine = await runCli(['--config-dir', d, 'webhook', 'test', 'pr-review', '--send', '--url', service.url, '--payload', own], env);
      expect(mine.stdout).toContain('POST /webhooks/github → 202');
      expect(service.requests).toHaveLength(1);
      expect(JSON.parse(service.requests[0]!.body).repository.full_name).toBe('me/mine');
    } finally {
      await service.close();
    }
  });
});

describe('hints carry the --config-dir in use (D5)', () => {
  test('the printed commands work when pasted as printed', async () => {
    const d = dir('webhooks: {}\n');
    const created = await hk(d, 'webhook', 'subscribe', 'a');
    const hint = /Secret \(shown once; '([^']+)' shows it again\)/.exec(created.stdout)?.[1];
    expect(hint).toBe(`npx hookagent --config-dir ${d} webhook show a --show-secret`);
    const shown = await runCli(hint!.split(' ').slice(2));
    expect([shown.code, shown.stdout]).toEqual([0, expect.stringContaining('whsec_')]);
    const paused = await hk(d, 'webhook', 'pause', 'a');
    const resume = /'([^']+ webhook resume a)'/.exec(paused.stdout)?.[1];
    expect(resume).toBe(`npx hookagent --config-dir ${d} webhook resume a`);
    expect((await runCli(resume!.split(' ').slice(2))).code).toBe(0);
    const status = await hk(d, 'status');
    expect(status.stdout).toContain(`serve is not running: npx hookagent --config-dir ${d} serve`);
    // Errors' hints too.
    const missing = await hk(d, 'webhook', 'show', 'ghost');
    expect(missing.stderr).toContain(`'npx hookagent --config-dir ${d} webhook list'`);
  });

  test('without --config-dir, hints stay as they were; a path with a space is quoted', async () => {
    const home = dir('webhooks: {}\n');
    const plain = await runCli(['webhook', 'list'], { HOOKAGENT_CONFIG_DIR: home });
    expect(plain.stdout).toContain('Create one with: npx hookagent webhook subscribe');
    const spaced = tempConfigDir('webhooks: {}\n', 'hookagent firsthour5 ');
    const listed = await hk(spaced, 'webhook', 'list');
    expect(listed.stdout).toContain(`Create one with: npx hookagent --config-dir "${spaced}" webhook subscribe`);
  });
});

describe('update prints only what it changes, and nothing when refused (D6)', () => {
  test('no Placeholders line for an update that does not change the prompt, or one that is refused', async () => {
    const d = dir();
    expect((await hk(d, 'webhook', 'subscribe', 'am', '--prompt', 'A {status} {alerts.0.labels.alertname}')).stdout).toContain('Placeholders: {status}, {alerts.0.labels.alertname}');
    const described = await hk(d, 'webhook', 'update', 'am', '--description', 'x');
    expect([described.code, described.stdout]).toEqual([0, "Updated subscription 'am' (secret unchanged).\n"]);
    const refused = await hk(d, 'webhook', 'update', 'am', '--debounce', '1.5s');
    expect([refused.code, refused.stdout]).toEqual([1, '']);
    expect(refused.stderr).toContain('--debounce takes whole seconds');
    const prompt = await hk(d, 'webhook', 'update', 'am', '--prompt', 'B {status}');
    expect(prompt.stdout).toBe("Placeholders: {status}\nUpdated subscription 'am' (secret unchanged).\n");
  });
});

describe('alert-sender event types (D7)', () => {
  test('alert.firing and incident.triggered are known types: no warning; an action alert senders never send is named', async () => {
    const d = dir();
    const firing = await hk(d, 'webhook', 'subscribe', 'alerts', '--events', 'alert.firing', '--prompt', 'x');
    expect([firing.code, firing.stderr]).toEqual([0, '']);
    const incident = await hk(d, 'webhook', 'subscribe', 'pd', '--events', 'incident.triggered,alert', '--prompt', 'x');
    expect([incident.code, incident.stderr]).toEqual([0, '']);
    const odd = await hk(d, 'webhook', 'subscribe', 'odd', '--events', 'alert.fired', '--prompt', 'x');
    expect(odd.code).toBe(0);
    expect(odd.stderr).toContain("warning: 'alert.fired': Alertmanager and Grafana send alert.firing and alert.resolved");
    const custom = await hk(d, 'webhook', 'subscribe', 'c', '--events', 'deploy', '--prompt', 'x');
    expect(custom.stderr).toContain("'deploy' is not a GitHub or GitLab event name");
  });
});

test('subscribe says once that public_url references a variable with no value (D10)', async () => {
  const d = dir('webhooks:\n  public_url: https://${FIRSTHOUR5_HOST}\n');
  const result = await hk(d, 'webhook', 'subscribe', 'a');
  expect(result.code).toBe(0);
  expect(result.stderr.match(/references \$\{FIRSTHOUR5_HOST\}/g)).toHaveLength(1);
});

describe('cosmetics (D12)', () => {
  test('status: every value starts in the same column', async () => {
    const d = dir();
    const status = await hk(d, 'status');
    const rows = status.stdout.split('\n').filter((line) => /^(local|serve|health|queue|dead letters|held|subscriptions|secrets) /.test(line));
    expect(rows).toHaveLength(8);
    const columns = new Set(rows.map((line) => /^[a-z]+(?: [a-z]+)? +/.exec(line)![0].length));
    expect(columns.size).toBe(1);
  });

  test('a filtered row\'s detail cut short ends with …', () => {
    const reason = `filter 'pull_request.labels[*].name contains "ready"' failed (no element of pull_request.labels ${'x'.repeat(200)})`;
    const row = filteredRow({ request_id: 'req_1', received_at: '2026-11-01T10:00:00.000Z', reason } as Parameters<typeof filteredRow>[0]);
    expect(row[5]!.endsWith('…')).toBe(true);
    expect(row[5]!.length).toBeLessThanOrEqual(160);
  });

  test('an error that already says what to do gets no --help line', async () => {
    const d = dir();
    const result = await hk(d, 'webhook', 'subscribe', 'chat', '--deliver', 'teamchat');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('needs the config section delivery.teamchat in config.yaml');
    expect(result.stderr).not.toContain('--help');
  });
});

describe('test --send finds this config dir\'s serve (D9)', () => {
  test('with no serve running for the config dir and no --url, it says so instead of posting to another instance', async () => {
    const d = dir('webhooks: {}\n');
    await hk(d, 'webhook', 'subscribe', 'a');
    const sent = await hk(d, 'webhook', 'test', 'a', '--send');
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain(`No serve is running for ${d}: start it with 'npx hookagent --config-dir ${d} serve', or pass --url`);
    expect(sent.stdout).not.toContain('POST');
  });

  test('a --url that is not an http(s) URL is a usage error', async () => {
    const d = dir('webhooks: {}\n');
    await hk(d, 'webhook', 'subscribe', 'a');
    for (const url of ['127.0.0.1:8644', 'ftp://x', '']) {
      const sent = await hk(d, 'webhook', 'test', 'a', '--send', '--url', url);
      expect([sent.code, sent.stderr]).toEqual([2, expect.stringContaining('--url must be an http:// or https:// URL')]);
    }
  });
});
