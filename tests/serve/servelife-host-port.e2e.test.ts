/**
 * servelife (hunt 12, defect 5): `serve --port "$PORT"` / `--host "$HOST"` with the variable
 * unset (a systemd unit's or a Dockerfile's `${PORT}`) is a usage error, as `--config-dir ''`
 * is: never a random port no sender knows, never every interface. A --host that is no
 * address is a usage error too; one this machine cannot listen on is blamed on the host,
 * never on the port.
 */
import { spawn } from 'node:child_process';
import { BIN, buildCli, tempConfigDir } from '../support/cli';

beforeAll(() => buildCli(), 60_000);

/** Runs serve until it exits, or says it listens (then it is stopped): its exit code (null if it listened) and output. */
function serveWith(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, '--config-dir', tempConfigDir('', 'hookagent-empty-'), 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (/listening on/.test(stdout)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code: /listening on/.test(stdout) ? null : code, stdout, stderr }));
  });
}

const usage = (message: string) => `error: ${message}\nRun with --help for usage and an example.\n`;

test.each([
  [['--port', ''], "--port needs a port number (it was given empty); leave it out to use 8644"],
  [['--port='], "--port needs a port number (it was given empty); leave it out to use 8644"],
  [['--port', ' '], "--port needs a port number (it was given empty); leave it out to use 8644"],
  [['--host', '', '--port', '0'], "--host needs an address to listen on (it was given empty); leave it out to use 127.0.0.1 (this machine only)"],
  [['--host=', '--port', '0'], "--host needs an address to listen on (it was given empty); leave it out to use 127.0.0.1 (this machine only)"],
])('serve %j is a usage error (exit 2), not a random port or every interface', async (args, message) => {
  const result = await serveWith(args);
  expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 2, stdout: '', stderr: usage(message) });
}, 30_000);

test.each(['http://127.0.0.1', '127.0.0.1:8644', 'exa mple', '[::1]', '*'])('serve --host %j is a usage error naming the value (exit 2)', async (host) => {
  const result = await serveWith(['--host', host, '--port', '0']);
  expect({ code: result.code, stdout: result.stdout, stderr: result.stderr })
    .toEqual({ code: 2, stdout: '', stderr: usage(`--host takes an IP address or a host name of this machine, such as 127.0.0.1, ::1 or 0.0.0.0 (every interface); no scheme, port or path (got ${JSON.stringify(host)})`) });
}, 30_000);

// Valid as a value, but not an address of this machine: the error is about the host, exit 1.
// (A name that does not resolve takes the same path, but looking one up asks a DNS server: not tested.)
test.each([
  ['192.0.2.1', 'is not an address of this machine'],
])('serve --host %s: the error is about the host, never the port', async (host, reason) => {
  const result = await serveWith(['--host', host, '--port', '0']);
  expect(result.code).toBe(1);
  const fix = 'pass --host an address of this machine, such as 127.0.0.1, ::1 or 0.0.0.0 (every interface)';
  const exact = (text: string) => text.replace(/[.()]/g, '\\$&');
  expect(result.stderr).toMatch(new RegExp(`^error: Cannot listen on ${exact(host)}: ${exact(host)} ${reason}; ${exact(fix)}\n$`));
  expect(result.stderr).not.toContain('--port');
}, 30_000);

test('a --port that is taken still names the port', async () => {
  const first = spawn(process.execPath, [BIN, '--config-dir', tempConfigDir('', 'hookagent-first-'), 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((done) => first.on('exit', done));
  try {
    const port = await new Promise<string>((resolve) => {
      let out = '';
      first.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (match) resolve(match[1] as string);
      });
    });
    const result = await serveWith(['--port', port]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 1, stderr: `error: Port ${port} on 127.0.0.1 is in use; choose another with --port\n` });
  } finally {
    first.kill('SIGTERM');
    await exited;
  }
}, 30_000);
