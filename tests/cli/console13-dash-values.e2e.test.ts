/**
 * `hookagent console --port -`, `--host -` and a bare `--port`/`--host` are usage errors that
 * say what the option takes (exit 2), as they are for serve. Before, the first two printed
 * `unknown option --`, and `--host -` given a value reached the console's own check, which
 * said it would make the console reachable from other machines.
 */
import { buildCli, hkIn, tempConfigDir } from '../support/cli';

let dir: string;
beforeAll(() => {
  buildCli();
  dir = tempConfigDir('', 'hookagent-console-dash-');
});

test.each([
  [['--port', '-'], '--port must be a whole number from 0 to 65535 (got "-")'],
  [['--host', '-'], '--host takes an IP address or a host name of this machine'],
  [['--host', 'http://127.0.0.1'], 'no scheme, port or path (got "http://127.0.0.1")'],
  [['--port'], '--port needs a value'],
  [['--host'], '--host needs a value'],
])('console %j is a usage error naming the option and what it takes (exit 2)', async (args, message) => {
  const result = await hkIn(dir, 'console', ...args);
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(message);
  expect(result.stderr).not.toContain('unknown option');
}, 60_000);
