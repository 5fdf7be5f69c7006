/**
 * `hookagent console` over the local store does not hold it: CLI commands and `serve`
 * started while the console runs work at once, and the console keeps answering.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, buildCli, runCli } from '../support/cli';
import { eventually, startServe, stopServe } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

test('the console leaves the local store free for the CLI and serve', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-console-cmd-'));
  writeFileSync(join(dir, 'config.yaml'), '');
  const env = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  const child = spawn(process.execPath, [BIN, '--config-dir', dir, 'console', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const names = async (base: string) => ((await (await fetch(`${base}/console/api/subscriptions`)).json()) as Array<{ name: string }>).map((s) => s.name);
  try {
    await eventually(() => /console on http:\/\/127\.0\.0\.1:\d+/.test(out), 'the console to listen');
    expect(out).toContain(`the local store in ${join(dir, 'data')}`);
    const base = /(http:\/\/127\.0\.0\.1:\d+)\/console/.exec(out)![1]!;
    expect(await names(base)).toEqual([]);
    const subscribed = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'first'], env);
    expect(subscribed.code).toBe(0);
    expect(await names(base)).toEqual(['first']);

    const serve = await startServe(dir, env);
    try {
      expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'second'], env)).code).toBe(0);
      expect((await names(base)).sort()).toEqual(['first', 'second']);
    } finally {
      expect(await stopServe(serve)).toBe(0);
    }
    expect((await names(base)).sort()).toEqual(['first', 'second']);
    const root = await fetch(`${base}/`, { redirect: 'manual' });
    expect([root.status, root.headers.get('location')]).toEqual([302, '/console']);
  } finally {
    child.kill('SIGINT');
  }
  expect(await exited).toBe(0);
}, 90_000);

test('a port in use is a clear error with the next step', async () => {
  const { createServer } = await import('node:net');
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-console-cmd-'));
  writeFileSync(join(dir, 'config.yaml'), '');
  try {
    const result = await runCli(['--config-dir', dir, 'console', '--port', String(port)]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`Port ${port} on 127.0.0.1 is in use; choose another with --port`);
    const bad = await runCli(['--config-dir', dir, 'console', '--port', '70000']);
    // A usage error, as serve's --port: exit 2 (it was 1, with a message of its own).
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--port must be a whole number from 0 to 65535 (got "70000")')]);
  } finally {
    blocker.close();
  }
});
