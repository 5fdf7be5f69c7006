/**
 * Hunt 9 D3 (the built CLI and serve): a URL key written as a `${VAR}` reference is checked
 * once resolved, as an inline one is (DESIGN §2.3: validated at start, every error names
 * its key path). Before, `public_url: ${PUB}` with PUB=hooks.acme.test was taken: subscribe
 * printed `hooks.acme.test/webhooks/custom/alerts` for the sender, and a Slack webhook URL
 * without its scheme let serve start and fail every delivery as "may have been sent".
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { startServe, stopServe } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

const NOT_A_URL = 'hooks.acme.test';

async function subscribeWith(yaml: string, env: Record<string, string> = {}, dotenv?: string) {
  const dir = tempConfigDir(yaml, 'hookagent-url-ref-');
  if (dotenv !== undefined) writeFileSync(join(dir, '.env'), dotenv);
  const result = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'alerts'], env);
  const list = await runCli(['--config-dir', dir, 'webhook', 'list', '--json'], env);
  // Whether it was created, read with a public_url that resolves (the environment wins over .env).
  const listed = await runCli(['--config-dir', dir, 'webhook', 'list', '--json'], { ...env, PUB: 'https://ok.acme.test' });
  const created = listed.code === 0 && (JSON.parse(listed.stdout) as Array<{ name: string }>).some((s) => s.name === 'alerts');
  return { ...result, printedUrl: /Custom:\s+(\S+)/.exec(result.stdout)?.[1] ?? null, created, list };
}

test('inline: public_url without a scheme is refused naming the key (control)', async () => {
  const result = await subscribeWith(`webhooks: { public_url: ${NOT_A_URL} }\n`);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('webhooks.public_url: must be an http(s) URL');
});

test.each([
  ['the environment', { PUB: NOT_A_URL }, undefined],
  ['.env', {}, `PUB=${NOT_A_URL}\n`],
])('by reference (from %s): public_url ${PUB} resolving to a non-URL is refused, creating nothing', async (_where, env, dotenv) => {
  const result = await subscribeWith('webhooks: { public_url: "${PUB}" }\n', { PUB: '', ...env }, dotenv);
  expect({ code: result.code, printedUrl: result.printedUrl, created: result.created }).toEqual({ code: 1, printedUrl: null, created: false });
  expect(result.stderr).toContain('webhooks.public_url: the value of ${PUB} is not an http(s) URL: set PUB to a whole URL with its scheme');
  expect(result.stderr).not.toContain(NOT_A_URL);
  // Every command refuses it, as an inline value that is no URL.
  expect(result.list.code).toBe(1);
  expect(result.list.stderr).toContain('webhooks.public_url: the value of ${PUB} is not an http(s) URL');
});

test('by reference: a URL is taken, its trailing slash trimmed as an inline one is', async () => {
  const result = await subscribeWith('webhooks: { public_url: "${PUB}" }\n', { PUB: 'https://hooks.acme.test/' });
  expect({ code: result.code, printedUrl: result.printedUrl, created: result.created }).toEqual({ code: 0, printedUrl: 'https://hooks.acme.test/webhooks/custom/alerts', created: true });
});

test('serve refuses to start when the Slack webhook URL has no scheme, naming the key and the variable only', async () => {
  const dir = tempConfigDir('delivery:\n  teamchat: { provider: slack, webhook_url: ${SLACK_WEBHOOK_URL} }\n', 'hookagent-url-ref-');
  const secret = 'hooks.slack.com/services/T0/B0/secretpart';
  const outcome = await startServe(dir, { SLACK_WEBHOOK_URL: secret }).then(async (serve) => {
    await stopServe(serve);
    return 'started';
  }, (error: Error) => error.message);
  expect(outcome).toMatch(/^serve exited with 1:/);
  expect(outcome).toContain('delivery.teamchat.webhook_url: the value of ${SLACK_WEBHOOK_URL} is not an http(s) URL');
  expect(outcome).not.toContain('secretpart');
});
