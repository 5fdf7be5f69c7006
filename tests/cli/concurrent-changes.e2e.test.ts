/**
 * Hunt 9 D3: two people run CLI commands on one subscription at the same moment (one
 * resumes it while another updates it) on a store another process is writing. Each command
 * says it did what it was asked; both changes must be in the store afterwards.
 *
 * Without sleeps: another process holds a write transaction; each command has read the
 * subscription and waits for the write lock in SQLite's busy handler (it sleeps in
 * nanosleep, seen in /proc/<pid>/wchan); then the other process commits and both go on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, buildCli, hkIn, tempConfigDir, type CliResult } from '../support/cli';
import { eventually } from '../support/serve';

const dirs: string[] = [];
beforeAll(() => buildCli(), 60_000);
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return { child, done: new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr }))) };
}

/** Waiting in SQLite's busy handler for the write lock. */
const waitsForLock = (pid: number): boolean => {
  try {
    return /nanosleep/.test(readFileSync(`/proc/${pid}/wchan`, 'utf8'));
  } catch {
    return false;
  }
};

/** Another process (better-sqlite3, as serve) holding a write transaction on `db` until `release()`. */
async function holdWriteLock(db: string): Promise<{ release(): Promise<void> }> {
  const script = [
    `const db = new (require(${JSON.stringify(require.resolve('better-sqlite3'))}))(${JSON.stringify(db)});`,
    "db.exec('BEGIN IMMEDIATE'); process.stdout.write('locked\\n');",
    "process.stdin.on('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });",
  ].join('\n');
  const holder = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  holder.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => holder.on('close', () => resolve()));
  await eventually(() => out.includes('locked'), 'the other process holds the write lock');
  return { release: async () => { holder.stdin!.end('commit\n'); await exited; } };
}

/** A subscription `a` delivering to the log, in a fresh config dir. */
async function withSubscription(...then: string[][]): Promise<string> {
  const dir = tempConfigDir('', 'hookagent-race-');
  dirs.push(dir);
  expect((await hkIn(dir, 'webhook', 'subscribe', 'a', '--events', 'issues', '--agent', 'none', '--deliver', 'log', '--prompt', 'A {issue.title}')).code).toBe(0);
  for (const args of then) expect((await hkIn(dir, ...args)).code).toBe(0);
  return dir;
}

/** Runs both commands while another process holds the write lock, then lets them write. */
async function together(dir: string, first: string[], second: string[]): Promise<[CliResult, CliResult]> {
  const lock = await holdWriteLock(join(dir, 'data', 'hookagent.db'));
  const a = run(['--config-dir', dir, ...first]);
  const b = run(['--config-dir', dir, ...second]);
  await eventually(() => waitsForLock(a.child.pid!) && waitsForLock(b.child.pid!), 'both commands waiting for the write lock');
  await lock.release();
  return Promise.all([a.done, b.done]);
}

const show = async (dir: string) => JSON.parse((await hkIn(dir, 'webhook', 'show', 'a', '--json')).stdout) as { state: string; description?: string; prompt?: string };

test('resume and update run at the same time: both changes are kept', async () => {
  const dir = await withSubscription(['webhook', 'pause', 'a']);
  const [resumed, updated] = await together(dir, ['webhook', 'resume', 'a'], ['webhook', 'update', 'a', '--description', 'from alice']);
  expect([resumed.code, resumed.stdout.trim()]).toEqual([0, "Resumed 'a'; released 0 held event(s) in arrival order."]);
  expect([updated.code, updated.stdout.trim()]).toEqual([0, "Updated subscription 'a' (secret unchanged)."]);
  const shown = await show(dir);
  expect({ state: shown.state, description: shown.description }).toEqual({ state: 'active', description: 'from alice' });
}, 60_000);

test('pause and update run at the same time: both changes are kept', async () => {
  const dir = await withSubscription();
  const [paused, updated] = await together(dir, ['webhook', 'pause', 'a'], ['webhook', 'update', 'a', '--prompt', 'B {issue.title}']);
  expect([paused.code, paused.stdout]).toEqual([0, expect.stringContaining("Paused 'a'.")]);
  expect([updated.code, updated.stdout]).toEqual([0, expect.stringContaining("Updated subscription 'a' (secret unchanged).")]);
  const shown = await show(dir);
  expect({ state: shown.state, prompt: shown.prompt }).toEqual({ state: 'paused', prompt: 'B {issue.title}' });
}, 60_000);
