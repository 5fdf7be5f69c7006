/**
 * servelife (hunt 13, defect 1): serve's --host and --port given a value that starts with
 * '-' (`--host -`, `--port -`, `--host -x`) are usage errors naming the option and what it
 * takes, as `--host=-` was; never yargs' "unknown option --". Given no value at all
 * (`--host $HOST` with HOST unset and unquoted, or `--port --`) they are usage errors too,
 * never the default address or port in silence.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { BIN, buildCli, tempConfigDir } from '../support/cli';

beforeAll(() => buildCli(), 60_000);

/** Runs serve until it exits, or says it listens (then it is stopped): its exit code (null if it listened) and output. */
function serveWith(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = tempConfigDir('', 'hookagent-dash-');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, '--config-dir', dir, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (/listening on/.test(stdout)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => {
      rmSync(dir, { recursive: true, force: true });
      resolve({ code: /listening on/.test(stdout) ? null : code, stdout, stderr });
    });
  });
}

const usage = (message: string) => `error: ${message}\nRun with --help for usage and an example.\n`;
const HOST_TAKES = '--host takes an IP address or a host name of this machine, such as 127.0.0.1, ::1 or 0.0.0.0 (every interface); no scheme, port or path';

test.each([
  [['--host', '-', '--port', '0'], `${HOST_TAKES} (got "-")`],
  [['--host=-', '--port', '0'], `${HOST_TAKES} (got "-")`],
  [['--host', '-x', '--port', '0'], `${HOST_TAKES} (got "-x")`],
  [['--host', '--x y', '--port', '0'], `${HOST_TAKES} (got "--x y")`],
  [['--port', '-'], '--port must be a whole number from 0 to 65535 (got "-")'],
  [['--port=-'], '--port must be a whole number from 0 to 65535 (got "-")'],
  [['--port', '-1'], '--port must be a whole number from 0 to 65535 (got "-1")'],
  [['--port', '-8644x'], '--port must be a whole number from 0 to 65535 (got "-8644x")'],
])('serve %j is a usage error naming the option and what it takes (exit 2)', async (args, message) => {
  const result = await serveWith(args);
  expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 2, stdout: '', stderr: usage(message) });
}, 30_000);

test.each([
  [['--port', '0', '--host'], '--host'],
  [['--port', '0', '--host', '--'], '--host'],
  [['--host', '127.0.0.1', '--port'], '--port'],
  [['--port', '--host', '127.0.0.1'], '--port'],
])('serve %j (no value) is a usage error, not the default address or port', async (args, flag) => {
  const result = await serveWith(args);
  expect({ code: result.code, stdout: result.stdout, stderr: result.stderr })
    .toEqual({ code: 2, stdout: '', stderr: usage(`${flag} needs a value (none was given, as with a script's unset variable): give one, or leave the option out`) });
}, 30_000);
