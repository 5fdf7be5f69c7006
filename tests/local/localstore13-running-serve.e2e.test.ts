/**
 * (hunt 13, localstore) which serve runs on a data dir. The serve lock is the kernel's and is the
 * truth ("a stale lock is never mistaken for a live one, whatever PID"); the CLI's
 * `status` and `webhook test --send` must not take another config dir's serve for this one's.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { startServe, stopServe } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

async function configured(): Promise<string> {
  const dir = tempConfigDir('agent: { provider: echo }\n', 'hookagent-h13-running-');
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'alerts', '--prompt', 'Alert {name}', '--deliver', 'log'])).code).toBe(0);
  return dir;
}

async function whatTheCliSees(dir: string) {
  const status = JSON.parse((await runCli(['--config-dir', dir, 'status', '--json'])).stdout) as { serve: { running: boolean; pid: number | null } };
  const send = await runCli(['--config-dir', dir, 'webhook', 'test', 'alerts', '--send', '--wait', '1']);
  return { running: status.serve.running, pid: status.serve.pid, sendExit: send.code, sendSays: (send.stdout + send.stderr).split('\n').filter((l) => !l.startsWith('note:'))[0] };
}

test('a copy of a config dir made while its serve runs (cp -a ~/.hookagent ~/.hookagent-b): no serve runs for the copy', async () => {
  const original = await configured();
  const serve = await startServe(original, {});
  try {
    const copy = `${original}-copy`;
    cpSync(original, copy, { recursive: true });
    const seen = await whatTheCliSees(copy);
    expect(seen).toEqual({ running: false, pid: null, sendExit: 1, sendSays: expect.stringContaining(`No serve is running for ${copy}`) });
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
}, 60_000);

test('after kill -9 (or a reboot), a PID now used by another process is not taken for serve', async () => {
  const dir = await configured();
  const serve = await startServe(dir, {});
  serve.child.kill('SIGKILL');
  await serve.exited;
  // The dead serve's files stay; its PID is reused by another process (here: this test's own),
  // as the existing serve-store test does for serve.json.
  const published = join(dir, 'data', 'serve-config.json');
  writeFileSync(published, JSON.stringify({ ...JSON.parse(readFileSync(published, 'utf8')), pid: process.pid }));
  const seen = await whatTheCliSees(dir);
  expect(seen).toEqual({ running: false, pid: null, sendExit: 1, sendSays: expect.stringContaining(`No serve is running for ${dir}`) });
}, 60_000);
