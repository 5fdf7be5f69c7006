/**
 * The standalone `hookagent console` gives senders the URLs `subscribe` prints: without
 * `webhooks.public_url`, where this config dir's serve listens, and serve's default
 * (127.0.0.1:8644) only while no serve runs (before, always 8644, also while serve listened
 * on another port).
 */
import { spawn } from 'node:child_process';
import { BIN, buildCli, runCli, tempConfigDir } from '../support/cli';
import { eventually, startServe, stopServe } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

test('the console names the running serve\'s URL, and 8644 once it stops', async () => {
  const dir = tempConfigDir('', 'hookagent-console-urls-');
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'alerts', '--prompt', 'Alert {x}'])).code).toBe(0);
  const serve = await startServe(dir, {});
  let serveStopped = false;
  const child = spawn(process.execPath, [BIN, '--config-dir', dir, 'console', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  try {
    await eventually(() => /console on http:\/\/127\.0\.0\.1:\d+/.test(out), 'the console to listen');
    const base = /(http:\/\/127\.0\.0\.1:\d+)\/console/.exec(out)![1]!;
    const urls = async () => ((await (await fetch(`${base}/console/api/subscriptions`)).json()) as Array<{ name: string; urls: Record<string, string> }>)[0]!.urls;
    expect((await urls()).custom).toBe(`${serve.url}/webhooks/custom/alerts`);
    serveStopped = true;
    expect(await stopServe(serve)).toBe(0);
    expect((await urls()).custom).toBe('http://127.0.0.1:8644/webhooks/custom/alerts');
  } finally {
    child.kill('SIGINT');
    await exited;
    if (!serveStopped) await stopServe(serve);
  }
}, 90_000);
