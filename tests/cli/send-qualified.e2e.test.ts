/**
 * Hunt 8 D1 (prof/hunt8-firsthour.md): `webhook test --send`, `test` and `test --dry-run`
 * for a subscription whose event filters name their source (`github:*`, `gitlab:…`). The
 * sample goes to the endpoint that subscription is reached on, never to a custom endpoint
 * it does not take; when that endpoint's secret is unset the CLI says so (exit 1) instead
 * of blaming the filters; a `*` or `github:*` filter judges a `--payload` by its keys.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, hkIn, tempConfigDir } from '../support/cli';
import { startServe, stopServe, type Serve } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

const hk = hkIn;
const PR = { action: 'opened', number: 2, pull_request: { number: 2, title: 't', html_url: 'https://github.com/o/r/pull/2' }, repository: { full_name: 'o/r' } };

describe('with serve running and only the GitHub secret set', () => {
  const dir = tempConfigDir('webhooks:\n  github: { secret: ${GITHUB_WEBHOOK_SECRET} }\n', 'hookagent-send-qualified-');
  writeFileSync(join(dir, '.env'), 'GITHUB_WEBHOOK_SECRET=send-qualified-secret\n');
  const pr = join(dir, 'pr.json');
  writeFileSync(pr, JSON.stringify(PR));
  let serve: Serve;
  beforeAll(async () => {
    serve = await startServe(dir, {}, { quiet: true });
    for (const [name, events] of [['all-github', 'github:*'], ['mrs', 'gitlab:merge_request'], ['everything', '*']] as const) {
      expect((await hk(dir, 'webhook', 'subscribe', name, '--events', events)).code).toBe(0);
    }
  }, 30_000);
  afterAll(async () => {
    await stopServe(serve);
  });

  test("--events 'github:*': --send posts a shipped GitHub sample to /webhooks/github, where it is taken", async () => {
    const sent = await hk(dir, 'webhook', 'test', 'all-github', '--send', '--wait', '20');
    expect(sent.stdout).not.toContain('/webhooks/custom/');
    expect(sent.stdout).toMatch(/POST \/webhooks\/github → 202 \{"status":"accepted","event":"pull_request",.*"subscriptions":\[[^\]]*"all-github"/);
    expect(sent.stdout).toContain('Outcome: delivered');
    expect(sent.code).toBe(0);
  }, 40_000);

  test("--events 'github:*': --send --payload <a pull request> goes to /webhooks/github as pull_request", async () => {
    const sent = await hk(dir, 'webhook', 'test', 'all-github', '--send', '--payload', pr, '--wait', '20');
    expect(sent.stdout).toMatch(/POST \/webhooks\/github → 202 \{"status":"accepted","event":"pull_request",.*"subscriptions":\[[^\]]*"all-github"/);
    expect(sent.stdout).not.toContain('did not take this event');
    expect(sent.code).toBe(0);
  }, 40_000);

  test("--events 'github:*': test and --dry-run on a pull request name the event the service would give it", async () => {
    const rendered = await hk(dir, 'webhook', 'test', 'all-github', '--payload', pr);
    expect(rendered.code).toBe(0);
    expect(rendered.stdout.split('\n')[0]).toBe('Event: pull_request.opened');
    expect(rendered.stdout).not.toContain('Event filters (no match');
    const dry = await hk(dir, 'webhook', 'test', 'all-github', '--payload', pr, '--dry-run');
    expect(dry.stdout.split('\n')[0]).toContain('on a --payload pull_request.opened event');
    expect(dry.stdout).not.toContain('Event filters (no match');
    const sample = await hk(dir, 'webhook', 'test', 'all-github', '--dry-run');
    expect(sample.stdout.split('\n')[0]).toContain('on a sample github:pull_request.opened event');
    expect(sample.stdout).not.toContain('Event filters (no match');
    // Without --payload, `webhook test` renders the same shipped sample (before: {} as `custom`).
    const plain = await hk(dir, 'webhook', 'test', 'all-github');
    expect(plain.code).toBe(0);
    expect(plain.stdout.split('\n')[0]).toBe('Event: pull_request.opened');
    expect(plain.stderr).toContain("rendered against a sample github 'pull_request.opened' payload");
  });

  test('--events gitlab:merge_request before the GitLab secret is set: refused, naming the secret and where to set it; nothing is posted', async () => {
    const sent = await hk(dir, 'webhook', 'test', 'mrs', '--send', '--wait', '10');
    expect(sent.code).toBe(1);
    expect(sent.stdout).toBe('');
    expect(sent.stderr).not.toContain('do not match');
    expect(sent.stderr).toContain("Not sent: 'mrs' takes gitlab:merge_request events only through /webhooks/gitlab");
    expect(sent.stderr).toContain('set webhooks.gitlab.secret in config.yaml to ${GITLAB_WEBHOOK_SECRET} and put that variable in .env');
  });

  test("--events '*': the custom endpoint still takes the stub; a pull request goes to /webhooks/github; --event gitlab:… needs the GitLab secret", async () => {
    const stub = await hk(dir, 'webhook', 'test', 'everything', '--send', '--wait', '20');
    expect(stub.stdout).toMatch(/POST \/webhooks\/custom\/everything → 202/);
    expect(stub.code).toBe(0);
    const own = await hk(dir, 'webhook', 'test', 'everything', '--send', '--payload', pr, '--wait', '20');
    expect(own.stdout).toMatch(/POST \/webhooks\/github → 202 \{"status":"accepted","event":"pull_request",.*"subscriptions":\[[^\]]*"everything"/);
    expect(own.code).toBe(0);
    const rendered = await hk(dir, 'webhook', 'test', 'everything', '--payload', pr);
    expect(rendered.stdout.split('\n')[0]).toBe('Event: pull_request.opened');
    const gitlab = await hk(dir, 'webhook', 'test', 'everything', '--send', '--event', 'gitlab:merge_request');
    expect(gitlab.code).toBe(1);
    expect(gitlab.stderr).toContain('webhooks.gitlab.secret');
    expect(gitlab.stdout).toBe('');
  }, 60_000);
});

describe('with no code-host secret set', () => {
  const dir = tempConfigDir('webhooks: {}\n', 'hookagent-send-qualified-none-');

  test('a github: filter next to one the custom endpoint takes: refused, and --event with that one is suggested', async () => {
    expect((await hk(dir, 'webhook', 'subscribe', 'mixed', '--events', 'github:issues,deploy')).code).toBe(0);
    // No serve runs for this config dir: the refusal comes first, as starting one would not help.
    const sent = await hk(dir, 'webhook', 'test', 'mixed', '--send');
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain('set webhooks.github.secret in config.yaml to ${GITHUB_WEBHOOK_SECRET}');
    expect(sent.stderr).toContain('--event deploy');
    expect(sent.stderr).not.toContain('No serve is running');
  });

  test("--events 'github:*': refused the same way", async () => {
    expect((await hk(dir, 'webhook', 'subscribe', 'all-github', '--events', 'github:*')).code).toBe(0);
    const sent = await hk(dir, 'webhook', 'test', 'all-github', '--send');
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain("Not sent: 'all-github' takes github:* events only through /webhooks/github");
    expect(sent.stderr).not.toContain('--event');
  });
});
