/**
 * config13 (hunt 13, D3): README "Configuration and CLI bounds": "config.yaml is read up to
 * 1 MiB … A larger file gets `Invalid configuration: config.yaml: '…/config.yaml' is larger
 * than 1 MB`". serve applies the same bound as the CLI: it refuses to start on such a file,
 * and refuses a reload to one, keeping the configuration it runs with.
 */
import { spawnSync } from 'node:child_process';
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, buildCli, runCli, tempConfigDir } from '../support/cli';
import { eventually, startServe, stopServe } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

// A valid configuration followed by 1.2 MB of comments (a long changelog kept in the file).
const oversized = `webhooks:\n  max_payload_size: 2KB\n${`# ${'n'.repeat(98)}\n`.repeat(12_000)}`;
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

test('the CLI and serve agree on a config.yaml over 1 MiB: serve refuses to start', () => {
  const dir = tempConfigDir(oversized, 'hookagent-big-');
  dirs.push(dir);
  const cli = spawnSync(process.execPath, [BIN, '--config-dir', dir, 'webhook', 'list'], { encoding: 'utf8' });
  expect(cli.stderr).toContain(`Invalid configuration:\n  config.yaml: '${join(dir, 'config.yaml')}' is larger than 1 MB`);
  const serve = spawnSync(process.execPath, [BIN, '--config-dir', dir, 'serve', '--port', '0', '--host', '127.0.0.1'], { encoding: 'utf8', timeout: 8_000 });
  expect({ status: serve.status, stderr: serve.stderr }).toEqual({ status: 1, stderr: expect.stringContaining(`config.yaml: '${join(dir, 'config.yaml')}' is larger than 1 MB`) });
  expect(serve.stdout).not.toContain('listening');
}, 60_000);

test('a config.yaml that is a symlink to /dev/zero is refused at start, not read without end', () => {
  const dir = tempConfigDir('', 'hookagent-big-');
  dirs.push(dir);
  rmSync(join(dir, 'config.yaml'));
  symlinkSync('/dev/zero', join(dir, 'config.yaml'));
  const serve = spawnSync(process.execPath, [BIN, '--config-dir', dir, 'serve', '--port', '0', '--host', '127.0.0.1'], { encoding: 'utf8', timeout: 8_000 });
  expect({ status: serve.status, stderr: serve.stderr }).toEqual({ status: 1, stderr: expect.stringContaining('is larger than 1 MB') });
}, 60_000);

test('a reload to a config.yaml over 1 MiB is refused, the previous configuration kept', async () => {
  const dir = tempConfigDir('webhooks:\n  max_payload_size: 1MB\n', 'hookagent-big-');
  dirs.push(dir);
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 's1', '--prompt', 'hi', '--deliver', 'log'])).code).toBe(0);
  const secret = (JSON.parse((await runCli(['--config-dir', dir, 'webhook', 'show', 's1', '--json', '--show-secret'])).stdout) as { secret: string }).secret;
  const serve = await startServe(dir, {});
  try {
    writeFileSync(join(dir, 'config.yaml'), oversized);
    await eventually(() => /configuration reloaded|invalid/.test(serve.output()), 'serve to look at the edit', 10_000);
    expect(serve.output()).not.toContain('configuration reloaded');
    expect(serve.output()).toContain('the edited configuration is invalid; still serving with the previous one');
    expect(serve.output()).toContain('larger than 1 MB');
    // Still the previous max_payload_size (1MB), not the oversized file's 2KB.
    const big = JSON.stringify({ x: 'y'.repeat(3_000) });
    const status = (await fetch(`${serve.url}/webhooks/custom/s1`, { method: 'POST', body: big, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } })).status;
    expect(status).toBe(202);
  } finally {
    await stopServe(serve);
  }
}, 60_000);
