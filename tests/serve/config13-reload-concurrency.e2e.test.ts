/**
 * config13 (hunt 13, D1): README "Concurrency": "Locally (serve): at most agent.concurrency
 * agent runs at once in the process, whatever the number of batches the consumer has in
 * flight." A configuration reload (any edit, even a comment) rebuilds the worker; the limit
 * is serve's, shared by every rebuilt worker, so a run in flight and a run started after the
 * reload count against the same `agent.concurrency`, and a raised one applies to the next run.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe } from '../support/serve';

const env = { OPENAI_API_KEY: 'sk-conc' };
let llm: LocalServer;
let inFlight = 0;
let most = 0;
let holding = true;
const releases: Array<() => void> = [];

beforeAll(async () => {
  buildCli();
  // Holds each call open until the test releases it, counting the calls at the model at once.
  llm = await startLocalServer(async (_req, res) => {
    // A test's end: what comes now (an event not yet run) is answered at once, uncounted.
    if (!holding) return sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: 'ok' } }] });
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise<void>((resolve) => releases.push(resolve));
    inFlight--;
    sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: 'ok' } }] });
  });
}, 60_000);
afterAll(async () => llm.close());

const yamlWith = (concurrency: number) => `agent: { provider: openai, model: m, base_url: ${llm.url}/v1, api_key: \${OPENAI_API_KEY}, concurrency: ${concurrency} }\n`;

/** serve with agent.concurrency 1 and one run held at the model; `edit` then rewrites config.yaml (or not); a second event follows. */
async function secondEventAfter(edit: ((dir: string) => void) | undefined, expectSecond: boolean): Promise<number> {
  most = 0;
  holding = true;
  const dir = tempConfigDir(yamlWith(1), 'hookagent-conc-');
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 's1', '--prompt', 'hi {x}', '--deliver', 'log'], env)).code).toBe(0);
  const secret = (JSON.parse((await runCli(['--config-dir', dir, 'webhook', 'show', 's1', '--json', '--show-secret'], env)).stdout) as { secret: string }).secret;
  const serve = await startServe(dir, env);
  const post = async (x: string) => (await fetch(`${serve.url}/webhooks/custom/s1`, { method: 'POST', body: JSON.stringify({ x }), headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': x } })).status;
  try {
    expect(await post('one')).toBe(202);
    await eventually(() => inFlight === 1, 'the first agent run at the model', 15_000);
    if (edit) {
      edit(dir);
      await eventually(() => /configuration reloaded/.test(serve.output()), 'configuration reloaded', 10_000);
    }
    expect(await post('two')).toBe(202);
    if (expectSecond) await eventually(() => inFlight === 2, 'the second agent run at the model', 15_000);
    else {
      // The second event is delivered at once (wake file); no model call may start while the first holds the slot.
      const until = Date.now() + 3_000;
      await eventually(() => inFlight > 1 || Date.now() > until, 'a second run or 3 s');
    }
    return most;
  } finally {
    holding = false;
    releases.splice(0).forEach((release) => release());
    await eventually(() => inFlight === 0, 'the held runs answered', 10_000);
    await stopServe(serve);
    rmSync(dir, { recursive: true, force: true });
  }
}

test('agent.concurrency: 1 holds without a reload', async () => {
  expect(await secondEventAfter(undefined, false)).toBe(1);
}, 60_000);

test('agent.concurrency: 1 holds across a configuration reload (a comment added)', async () => {
  expect(await secondEventAfter((dir) => writeFileSync(join(dir, 'config.yaml'), `${yamlWith(1)}# edited\n`), false)).toBe(1);
}, 60_000);

test('agent.concurrency raised by a reload applies to the next run while one is in flight', async () => {
  expect(await secondEventAfter((dir) => writeFileSync(join(dir, 'config.yaml'), yamlWith(2)), true)).toBe(2);
}, 60_000);
