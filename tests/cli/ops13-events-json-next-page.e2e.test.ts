/**
 * `webhook events <name> --limit N --json` with a full page says on stderr how to get the
 * next one, as the text output does (hunt 13, ops: it printed nothing there, so a script
 * reading `--json` could not tell whether more pages exist). stdout stays a JSON array.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, runCli } from '../support/cli';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

let serve: Serve;
let dir: string;
beforeAll(async () => {
  buildCli();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-ops-json-'));
  writeFileSync(join(dir, 'config.yaml'), '');
  serve = await startServe(dir, {});
}, 90_000);
afterAll(async () => {
  if (serve) expect(await stopServe(serve)).toBe(0);
});

const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args]);

test('a full --json page says on stderr how to get the next one, as the text output does', async () => {
  expect((await hk('webhook', 'subscribe', 'p', '--agent', 'none', '--prompt', 'm {x}', '--deliver', 'log')).code).toBe(0);
  const secret = (JSON.parse((await hk('webhook', 'show', 'p', '--show-secret', '--json')).stdout) as { secret: string }).secret;
  for (let i = 0; i < 5; i++) {
    const r = await fetch(`${serve.url}/webhooks/custom/p`, { method: 'POST', body: JSON.stringify({ x: i }), headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` } });
    expect(r.status).toBe(202);
  }
  await eventually(async () => (JSON.parse((await hk('webhook', 'events', 'p', '--json')).stdout) as unknown[]).length === 5, 'five events');
  const text = await hk('webhook', 'events', 'p', '--limit', '2');
  expect(text.stderr).toMatch(/Older events: .* --before evt_/);
  const json = await hk('webhook', 'events', 'p', '--limit', '2', '--json');
  expect(JSON.parse(json.stdout)).toHaveLength(2);
  expect(json.stderr).toMatch(/Older events: .* --before evt_/);
}, 90_000);
