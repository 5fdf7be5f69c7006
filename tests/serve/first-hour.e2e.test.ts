/**
 * The first hour, followed as the README's walkthrough says (issue 23): serve with the
 * starter config, a GitHub secret put into .env while serve runs applies to the next
 * request; an invalid edit keeps serving with the old configuration and says why.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import githubExamples from '@octokit/webhooks-examples';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';
import { serveConsole } from '../console/serve-console-link';

const pr = githubExamples.find((g) => g.name === 'pull_request')!.examples.find((e) => (e as { action?: string }).action === 'opened')!;

async function postGithub(url: string, secret: string, delivery: string) {
  const body = JSON.stringify(pr);
  const response = await fetch(`${url}/webhooks/github`, {
    method: 'POST', body,
    headers: { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-github-delivery': delivery, 'x-hub-signature-256': signHub(body, secret) },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

beforeAll(() => buildCli(), 60_000);

/** A fresh config dir and, once `start` is called, serve on it as a first start leaves it (no GitHub secret); stopped after the block. */
function starterServe(prefix: string): { dir: string; start: () => Promise<Serve> } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let serve: Serve | undefined;
  afterAll(async () => {
    if (serve) await stopServe(serve);
  });
  return { dir, start: async () => (serve = await startServe(dir, { GITHUB_WEBHOOK_SECRET: '' })) };
}

/** config.yaml with the GitHub secret as a reference, and its value in .env. */
function githubSecretIn(dir: string, secret: string): void {
  writeFileSync(join(dir, 'config.yaml'), 'webhooks:\n  github: { secret: ${GITHUB_WEBHOOK_SECRET} }\n');
  writeFileSync(join(dir, '.env'), `GITHUB_WEBHOOK_SECRET=${secret}\n`);
}

describe('configuration changes apply without a restart', () => {
  const { dir, start } = starterServe('hookagent-first-hour-');

  test('starter config → banner warns; uncomment the GitHub secret and set it in .env → the next signed request verifies', async () => {
    const serve = await start();
    expect(serve.output()).toContain('/webhooks/github refuses every request (401): no secret is configured');
    const sub = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'pr-review', '--events', 'pull_request']);
    expect(sub.code).toBe(0);
    expect((await postGithub(serve.url, 'first-hour-secret', 'd1')).status).toBe(401);

    // The walkthrough: uncomment the line, put the variable in .env.
    const config = readFileSync(join(dir, 'config.yaml'), 'utf8').replace('# github: { secret: ${GITHUB_WEBHOOK_SECRET} }', 'github: { secret: ${GITHUB_WEBHOOK_SECRET} }');
    writeFileSync(join(dir, '.env'), 'GITHUB_WEBHOOK_SECRET=first-hour-secret\n');
    writeFileSync(join(dir, 'config.yaml'), config);
    await eventually(() => serve.output().includes('configuration reloaded'), 'the reload');
    const accepted = await postGithub(serve.url, 'first-hour-secret', 'd2');
    expect(accepted).toMatchObject({ status: 202, body: { status: 'accepted', subscriptions: ['pr-review'] } });

    // The walkthrough's checks: test --send reports the outcome, events lists what happened.
    const sent = await runCli(['--config-dir', dir, 'webhook', 'test', 'pr-review', '--send', '--url', serve.url]);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain('→ 202');
    expect(sent.stdout).toContain('Outcome: delivered');
    const listed = await runCli(['--config-dir', dir, 'webhook', 'events', 'pr-review']);
    expect(listed.stdout).toMatch(/pull_request\.opened\s+delivered/);
    expect(listed.stdout).toContain('log delivered');

    // An invalid edit: still serving with the previous configuration, and the log says why.
    writeFileSync(join(dir, 'config.yaml'), `${config}\nwebhookz: {}\n`);
    await eventually(() => serve.output().includes('the edited configuration is invalid'), 'the refusal');
    expect(serve.output()).toContain('webhookz');
    expect((await postGithub(serve.url, 'first-hour-secret', 'd3')).status).toBe(202);

    // The CLI reads the same files and says what is wrong with them.
    const refused = await runCli(['--config-dir', dir, 'webhook', 'list']);
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining('webhookz')]);
  }, 60_000);
});

describe('test --send before any GitHub secret is set', () => {
  const { dir, start } = starterServe('hookagent-first-send-');

  test('goes through the custom endpoint with the same realistic sample as the dry run, so the prompt renders', async () => {
    const serve = await start();
    const issue = githubExamples.find((g) => g.name === 'issues')!.examples[0] as { issue: { title: string } };
    expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'triage', '--events', 'issues', '--prompt', 'Triage: {issue.title}'])).code).toBe(0);
    const dry = await runCli(['--config-dir', dir, 'webhook', 'test', 'triage', '--dry-run']);
    expect(dry.stdout).toContain(`Triage: ${issue.issue.title}`);
    const sent = await runCli(['--config-dir', dir, 'webhook', 'test', 'triage', '--send', '--url', serve.url]);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain('POST /webhooks/custom/triage → 202');
    expect(sent.stdout).toContain('Outcome: delivered');
    expect(sent.stdout).toContain(`Triage: ${issue.issue.title}`);
    expect(sent.stdout).not.toContain('not found in the payload');
    expect(sent.stderr).not.toContain('no sample payload ships');

    // A subscription without events has no sample: the stub it sends is named, with the way out.
    expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'alerts', '--prompt', 'Alert {alerts.0.labels.alertname}'])).code).toBe(0);
    const stubbed = await runCli(['--config-dir', dir, 'webhook', 'test', 'alerts', '--send', '--url', serve.url]);
    expect(stubbed.code).toBe(0);
    expect(stubbed.stderr).toContain('note: no sample payload ships for this event: sending {"event_type":"custom","test":true');
    expect(stubbed.stderr).toContain('pass --payload <file|json>');
    expect(stubbed.stdout).toContain('placeholder {alerts.0.labels.alertname} not found in the payload');
  }, 60_000);
});

describe('test --send and payload filters', () => {
  const { dir, start } = starterServe('hookagent-filtered-send-');

  test('a sample the subscription\'s filter turns away is reported at once with the filter that failed, also when another subscription took it; a paused one says it holds the event', async () => {
    githubSecretIn(dir, 'filtered-send-secret');
    const serve = await start();
    for (const [name, draft] of [['ready', 'false'], ['drafts', 'true']] as const) {
      expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', name, '--events', 'pull_request', '--filter', `pull_request.draft == ${draft}`])).code).toBe(0);
    }
    const started = Date.now();
    const taken = await runCli(['--config-dir', dir, 'webhook', 'test', 'drafts', '--send', '--url', serve.url, '--wait', '20']);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(taken.stdout).toContain('"subscriptions":["ready"]');
    expect(taken.stdout).toContain(`'drafts' did not take this event: filter "pull_request.draft == true" failed (pull_request.draft is false); it went to ready`);
    expect(taken.stdout).not.toContain('Still queued');
    // Said before it is sent: /webhooks/github fans out, so testing one subscription runs the others that match.
    expect(taken.stderr).toContain("note: /webhooks/github fans out to every subscription that matches: 'ready' will take this event too and deliver to their own targets");
    expect((await runCli(['--config-dir', dir, 'webhook', 'test', 'drafts', '--send', '--url', serve.url, '--wait', 'abc'])).code).toBe(2);

    // Alone, the filtered sample is answered 200 ignored: the same explanation.
    expect((await runCli(['--config-dir', dir, 'webhook', 'delete', 'ready'])).code).toBe(0);
    const ignored = await runCli(['--config-dir', dir, 'webhook', 'test', 'drafts', '--send', '--url', serve.url]);
    expect(ignored.stdout).toContain('→ 200');
    expect(ignored.stdout).toContain(`'drafts' did not take this event: filter "pull_request.draft == true" failed (pull_request.draft is false)`);

    // Paused: the event is held, and no waiting can change that.
    expect((await runCli(['--config-dir', dir, 'webhook', 'pause', 'drafts'])).code).toBe(0);
    const before = Date.now();
    const held = await runCli(['--config-dir', dir, 'webhook', 'test', 'drafts', '--send', '--url', serve.url, '--payload', JSON.stringify({ action: 'opened', pull_request: { draft: true } }), '--wait', '20']);
    expect(Date.now() - before).toBeLessThan(15_000);
    expect(held.stdout).toContain('"status":"held"');
    expect(held.stdout).toMatch(/'drafts' is paused: the event is held until '(npx )?hookagent --config-dir \S+ webhook resume drafts' releases it/);
    expect(held.stdout).not.toContain('Still held');

    // Debounced: still queued when --wait ends, and the debounce is named as the reason.
    expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'later', '--events', 'issues', '--debounce', '30s'])).code).toBe(0);
    const debounced = await runCli(['--config-dir', dir, 'webhook', 'test', 'later', '--send', '--url', serve.url, '--wait', '1']);
    expect(debounced.stdout).toMatch(/Still queued after 1s \('later' debounces each subject for 30s before it runs\); see '(npx )?hookagent --config-dir \S+ webhook events later'\./);
  }, 60_000);
});

describe('status of the local service (no aws section)', () => {
  const { dir, start } = starterServe('hookagent-local-status-');

  test('serve not running → exit 3; running: its URL, /health, queue, paused; an edit serve refused and a secret not set → exit 3', async () => {
    githubSecretIn(dir, 'status-secret');
    const down = await runCli(['--config-dir', dir, 'status']);
    expect([down.code, down.stdout]).toEqual([3, expect.stringMatching(/serve is not running: (npx )?hookagent --config-dir \S+ serve/)]);
    const serve = await start();
    await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'quiet', '--events', 'push']);
    await runCli(['--config-dir', dir, 'webhook', 'pause', 'quiet']);
    const good = await runCli(['--config-dir', dir, 'status', '--json']);
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({
      mode: 'local', serve: { running: true, url: serve.url, health: { ok: true, status: 200 }, config: 'current' },
      queue: { waiting: 0, in_flight: 0 }, dead_letters: { depth: 0 }, held: 0, subscriptions: { total: 1, paused: ['quiet'] },
      secrets: { referenced: ['GITHUB_WEBHOOK_SECRET'], missing: [] }, attention: [],
    });
    const text = await runCli(['--config-dir', dir, 'status']);
    expect(text.stdout).toContain(`on ${serve.url}, configuration current`);
    expect(text.stdout).toContain('held          0 (paused: quiet)');
    expect(text.stdout).toContain('All good.');

    // An edit naming a variable that is set nowhere: serve keeps its configuration, status says both.
    writeFileSync(join(dir, 'config.yaml'), 'webhooks:\n  github: { secret: ${GITHUB_WEBHOOK_SECRET} }\ndelivery:\n  teamchat: { provider: slack, webhook_url: ${SLACK_WEBHOOK_URL} }\n');
    await eventually(() => serve.output().includes('still serving with the previous one'), 'the refused reload');
    const refused = await runCli(['--config-dir', dir, 'status', '--json']);
    expect(refused.code).toBe(3);
    const report = JSON.parse(refused.stdout) as { serve: { config: string }; secrets: { missing: string[] }; attention: string[] };
    expect(report.serve.config).toBe('older than config.yaml/.env');
    expect(report.secrets.missing).toEqual(['SLACK_WEBHOOK_URL']);
    expect(report.attention).toEqual([expect.stringContaining('it refused the edited files'), expect.stringContaining('config.yaml references SLACK_WEBHOOK_URL, set neither in the environment nor in')]);
  }, 60_000);
});

describe('serve\'s console after a reload', () => {
  const { dir, start } = starterServe('hookagent-console-reload-');

  test('a public_url added to config.yaml shows in the console without a restart', async () => {
    writeFileSync(join(dir, 'config.yaml'), 'webhooks: {}\n');
    const serve = await start();
    const { headers } = serveConsole(serve);
    const info = async () => (await (await fetch(`${serve.url}/console/api/info`, { headers })).json()) as { public_url: string };
    expect((await info()).public_url).toBe('');
    writeFileSync(join(dir, 'config.yaml'), 'webhooks:\n  public_url: https://hooks.example.com\n');
    await eventually(() => serve.output().includes('configuration reloaded'), 'the reload');
    expect((await info()).public_url).toBe('https://hooks.example.com');
  }, 60_000);
});
