/**
 * Hunt 13 D4: /webhooks/github answers every ping `200 {"status":"ok","event":"ping"}` before
 * any routing (README "Answers"), so a subscription to GitHub's ping never fires. `subscribe`
 * accepted `github:ping` without a word, and `webhook test --send` said another ping
 * subscription "will take this event too". Now `github:ping` is refused as a filter that
 * would never fire, an unqualified `ping` (it can still match a custom sender) is a warning,
 * `custom:ping` says nothing, and the fan-out note names no ping subscription.
 * The built CLI and `hookagent serve`, a signed GitHub ping.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, runCli } from '../support/cli';
import { startServe, stopServe } from '../support/serve';

const env = { GH_SECRET: 'reqlog13-ping-secret', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
let dir: string;
const cli = (...args: string[]) => runCli(['--config-dir', dir, ...args], env);
const subscribe = (name: string, ...events: string[]) => cli('webhook', 'subscribe', name, ...events.flatMap((e) => ['--events', e]), '--agent', 'none', '--prompt', 'hook {hook_id} set up');
beforeAll(() => {
  buildCli();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-reqlog13-ping-'));
  writeFileSync(join(dir, 'config.yaml'), 'webhooks: { github: { secret: ${GH_SECRET} } }\n');
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("GitHub's ping is refused as an event filter, qualified; an unqualified one is a warning; custom:ping is quiet", async () => {
  for (const filter of ['github:ping', 'github:ping.created']) {
    const refused = await subscribe('hook-setup', 'push', filter);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`'${filter}' would never fire: GitHub's ping is answered 200 ok before routing and reaches no subscription`);
  }
  expect(JSON.parse((await cli('webhook', 'list', '--json')).stdout)).toEqual([]);

  const plain = await subscribe('custom-ping', 'ping');
  expect(plain.code).toBe(0);
  expect(plain.stderr).toContain("warning: 'ping' never matches GitHub's ping (answered 200 ok before routing); it can match a custom sender's ping: write it 'custom:ping'");
  const custom = await subscribe('custom-ping-2', 'custom:ping');
  expect([custom.code, custom.stderr]).toEqual([0, '']);
  // `update` judges the filters it is given: a stored one does not block it.
  const refusedUpdate = await cli('webhook', 'update', 'custom-ping-2', '--events', 'github:ping');
  expect(refusedUpdate.code).toBe(1);
  expect((await cli('webhook', 'update', 'custom-ping', '--description', 'pings')).code).toBe(0);
}, 60_000);

test('webhook test --send of a ping names no other ping subscription as taking it, and says the ping reaches none', async () => {
  const payload = join(dir, 'ping.json');
  writeFileSync(payload, JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1, hook: { events: ['*'] }, repository: { full_name: 'o/r' } }));
  // Another unqualified ping subscription, which ingest's routing alone would hand the ping to.
  expect((await subscribe('other-ping', 'ping')).code).toBe(0);
  const serve = await startServe(dir, env);
  try {
    const sent = await cli('webhook', 'test', 'custom-ping', '--payload', payload, '--send', '--url', serve.url);
    // Before: "note: /webhooks/github fans out to every subscription that matches: 'other-ping' will take this event too".
    expect(sent.stderr).not.toContain('other-ping');
    expect(sent.stdout).toContain('POST /webhooks/github → 200 {"status":"ok","event":"ping"}');
    expect(sent.stdout).toContain("'custom-ping' did not take this event: GitHub's ping is answered 200 ok before routing and reaches no subscription");
    for (const name of ['custom-ping', 'other-ping']) expect(JSON.parse((await cli('webhook', 'events', name, '--json')).stdout)).toEqual([]);
  } finally {
    await stopServe(serve);
  }
}, 60_000);
