/**
 * servelife (hunt 13, defect 2): a stop signal while serve starts (here: while it waits for
 * its store, which the test holds locked) ends serve as a normal stop does: exit 0, logged
 * `stopped during start-up`, its lock released, and it never goes on to listen. Before,
 * serve's handlers came only after the banner: the signal killed it (no line, exit by
 * signal), and as PID 1 of a container the kernel dropped it, so serve went on to listen
 * and take work after `docker stop` (which then waits and kills it).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { BIN, buildCli, runCli, tempConfigDir } from '../support/cli';
import { eventually, startServe, stopServe } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A config dir whose store exists (a subscription made), so that the test can lock it. */
async function withStore(): Promise<string> {
  const dir = tempConfigDir('', 'hookagent-startstop-');
  dirs.push(dir);
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 's1', '--events', 'issues', '--deliver', 'log'])).code).toBe(0);
  return dir;
}

/** Holds the store so that no other connection may read it: serve's start-up waits in its busy timeout. */
function holdStore(dir: string): Database.Database {
  const held = new Database(join(dir, 'data', 'hookagent.db'));
  held.pragma('locking_mode = EXCLUSIVE');
  held.exec('BEGIN EXCLUSIVE');
  return held;
}

const exitOf = (child: ChildProcess) => new Promise<{ code: number | null; signal: string | null }>((done) => child.on('exit', (code, signal) => done({ code, signal })));

/**
 * Starts `command`, waits until serve took its lock (serve.json written) and is held at its
 * store, sends `signal` to `pid()`, then lets the store go. Resolves with how serve ended, or
 * `listened` when it went on to listen instead.
 */
async function stopWhileStarting(dir: string, command: string[], signal: NodeJS.Signals, pid: (child: ChildProcess) => number) {
  const held = holdStore(dir);
  const child = spawn(command[0] as string, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exit = exitOf(child);
  let exited = false;
  void exit.then(() => (exited = true));
  try {
    await eventually(() => existsSync(join(dir, 'data', 'serve.json')), 'serve took its lock');
    process.kill(pid(child), signal);
    held.exec('ROLLBACK');
    held.close();
    await eventually(() => exited || output.includes('listening on'), 'serve to end or listen');
    return { ended: exited ? await exit : 'listened', output: () => output };
  } finally {
    if (held.open) held.close();
    child.kill('SIGKILL');
    await exit;
  }
}

test.each(['SIGTERM', 'SIGINT'] as const)('%s while serve waits for its store: a clean stop (exit 0), lock released, never listening', async (signal) => {
  const dir = await withStore();
  const { ended, output } = await stopWhileStarting(dir, [process.execPath, BIN, '--config-dir', dir, 'serve', '--port', '0'], signal, (child) => child.pid!);
  expect({ ended, listened: output().includes('listening on') }).toEqual({ ended: { code: 0, signal: null }, listened: false });
  expect(output()).toMatch(new RegExp(`stopping  signal=${signal}\\n.*stopped during start-up  signal=${signal}\\n$`));
  // What it took is given back: its lock (serve.json goes with it), so the next serve starts.
  expect(existsSync(join(dir, 'data', 'serve.json'))).toBe(false);
  const next = await startServe(dir, {});
  expect(await stopServe(next)).toBe(0);
}, 60_000);

// PID 1 of a new PID namespace, as in a container without --init (unshare needs root, as CI has).
const canUnshare = (() => {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('unshare', ['--pid', '--fork', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

(canUnshare ? test : test.skip)('as PID 1 (a container): SIGTERM while serve starts stops it; it does not go on to listen', async () => {
  const dir = await withStore();
  const command = ['unshare', '--pid', '--fork', '--kill-child', process.execPath, BIN, '--config-dir', dir, 'serve', '--port', '0'];
  // serve's pid as this namespace sees it (inside its own namespace it is 1).
  const inner = (child: ChildProcess) => Number(execFileSync('pgrep', ['-P', String(child.pid)]).toString().trim().split('\n')[0]);
  const { ended, output } = await stopWhileStarting(dir, command, 'SIGTERM', inner);
  expect({ ended, listened: output().includes('listening on') }).toEqual({ ended: { code: 0, signal: null }, listened: false });
  expect(output()).toContain('stopped during start-up  signal=SIGTERM');
}, 60_000);
