/**
 * The CLI's finish, run as users run it (the built bundle as a child process): --version,
 * completion scripts, colour only on a TTY and never with NO_COLOR, tab-separated piped
 * output, tables that fit the terminal, events --follow/--status, progress while
 * `test --send` waits, an example in every --help, a next step in every error.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../functions/core/ports';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import type { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import { outputStyle, table } from '../../cli/output';
import { hintFor } from '../../cli/hints';
import { record } from '../console/fixture';
import { BIN, buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer } from '../support/local-http';
import { eventually } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

const ESC = '\u001b[';
const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };

function configDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-polish-'));
  writeFileSync(join(dir, 'config.yaml'), '');
  return dir;
}

/** Runs the CLI on a pseudo-terminal (util-linux `script`), as in an interactive shell. */
function runOnTty(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: { ...process.env, TERM: 'xterm-256color', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
}

test('--version prints the package version', async () => {
  const result = await runCli(['--version']);
  expect(result).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
});

test('completion prints a bash or zsh script that yargs answers through', async () => {
  const bash = await runCli(['completion', 'bash']);
  expect(bash.code).toBe(0);
  expect(bash.stdout).toContain('_hookagent_yargs_completions');
  expect(bash.stdout).toContain('complete -o bashdefault -o default -F _hookagent_yargs_completions hookagent');
  const zsh = await runCli(['completion', 'zsh']);
  expect(zsh.stdout).toMatch(/^#compdef hookagent/);
  const fromShell = await runCli(['completion'], { SHELL: '/usr/bin/zsh' });
  expect(fromShell.stdout).toMatch(/^#compdef hookagent/);
  const words = await runCli(['--get-yargs-completions', 'hookagent', 'webhook', ''], { SHELL: '/bin/bash' });
  expect(words.stdout.split('\n')).toEqual(expect.arrayContaining(['subscribe', 'events', 'replay']));
  const top = await runCli(['--get-yargs-completions', 'hookagent', ''], { SHELL: '/bin/bash' });
  expect(top.stdout.split('\n')).toEqual(expect.arrayContaining(['webhook', 'console', 'serve']));
  // A shell it has no script for is a usage error, not a bash script fish cannot read.
  const fish = await runCli(['completion', 'fish']);
  expect([fish.code, fish.stdout, fish.stderr]).toEqual([2, '', expect.stringContaining("completion supports bash and zsh, not 'fish'")]);
});

describe('output', () => {
  const dir = configDir();
  beforeAll(async () => {
    expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'demo', '--events', 'push', '--description', 'a subscription with a long description'])).code).toBe(0);
  });

  test('piped: tab-separated, no colour, no padding', async () => {
    const listed = await runCli(['--config-dir', dir, 'webhook', 'list']);
    expect(listed.stdout).not.toContain(ESC);
    const [header, row] = listed.stdout.trim().split('\n');
    expect(header).toBe('NAME\tSTATE\tEVENTS\tDELIVER\tSKILLS\tCREATED');
    expect(row!.split('\t').slice(0, 5)).toEqual(['demo', 'active', 'push', 'log', '-']);
  });

  test('on a terminal: colour; with NO_COLOR: none', async () => {
    const coloured = await runOnTty(['--config-dir', dir, 'webhook', 'list'], {});
    expect(coloured).toContain(`${ESC}32mactive${ESC}0m`);
    expect(coloured.replace(/\u001b\[\d+m/g, '')).toMatch(/NAME\s+STATE\s+EVENTS[^\n]*\n\s*demo\s+active\s+push/);
    const plain = await runOnTty(['--config-dir', dir, 'webhook', 'list'], { NO_COLOR: '1' });
    expect(plain).toContain('demo');
    expect(plain).not.toContain(ESC);
  }, 30_000);

  test('tables fit the terminal width; colour needs a TTY and no NO_COLOR', () => {
    const rows = [['demo', 'active', 'x'.repeat(80), 'log']];
    const narrow = table(['NAME', 'STATE', 'EVENTS', 'DELIVER'], rows, { tty: true, color: false, columns: 50 });
    for (const line of narrow.split('\n')) expect(line.length).toBeLessThanOrEqual(50);
    expect(narrow).toContain('…');
    expect(outputStyle({ isTTY: true, columns: 80 }, {})).toEqual({ tty: true, color: true, columns: 80 });
    expect(outputStyle({ isTTY: true, columns: 80 }, { NO_COLOR: '1' }).color).toBe(false);
    expect(outputStyle({ isTTY: false }, {}).color).toBe(false);
  });
});

describe('webhook events --status and --follow', () => {
  const dir = configDir();
  let store: LocalRuntime;
  let events: SqliteEventLog;
  beforeAll(async () => {
    mkdirSync(join(dir, 'data'), { recursive: true });
    // Held as serve holds it: the CLI talks to this process's store.
    store = await openLocalRuntime(join(dir, 'data'), { role: 'serve', clock: systemClock });
    const subscriptions = store.subscriptions;
    events = store.events;
    await subscriptions.create({ name: 'demo', events: [], skills: [], deliver: ['log'], state: 'active', secret: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', created_at: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z' });
    await events.putAll([record('demo', Date.now() - 60_000, 'delivered'), record('demo', Date.now() - 50_000, 'failed')]);
  });
  afterAll(async () => store.close());

  test('--status keeps only that status', async () => {
    const failed = JSON.parse((await runCli(['--config-dir', dir, 'webhook', 'events', 'demo', '--status', 'failed', '--json'])).stdout) as Array<{ status: string }>;
    expect(failed.map((e) => e.status)).toEqual(['failed']);
    const bad = await runCli(['--config-dir', dir, 'webhook', 'events', 'demo', '--status', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Choices:');
  });

  test('--follow prints an event that arrives while it runs, and its change of status', async () => {
    // --limit 1: the older event read beside the newest is not printed later as if it were new.
    const child = spawn(process.execPath, [BIN, '--config-dir', dir, 'webhook', 'events', 'demo', '--follow', '--json', '--limit', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await eventually(() => out.split('\n').filter(Boolean).length >= 1, 'the recent events');
      const lines = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { event_id: string; status: string });
      expect(lines().map((e) => e.status)).toEqual(['failed']);
      const fresh = record('demo', Date.now(), 'queued');
      await events.putAll([fresh]);
      await eventually(() => lines().some((e) => e.event_id === fresh.event_id), 'the new event', 15_000);
      expect(lines().map((e) => e.status)).toEqual(['failed', 'queued']);
      await events.putAll([{ ...fresh, status: 'delivered', updated_at: new Date(Date.now() + 1000).toISOString() }]);
      await eventually(() => lines().some((e) => e.event_id === fresh.event_id && e.status === 'delivered'), 'its new status', 15_000);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  }, 40_000);

  test('test --send shows progress on stderr while it waits, then the outcome', async () => {
    const pending = record('demo', Date.now(), 'queued');
    await events.putAll([pending]);
    const service = await startLocalServer((_req, res) => sendJson(res, 202, { status: 'accepted', event_id: pending.event_id }));
    const child = spawn(process.execPath, [BIN, '--config-dir', dir, 'webhook', 'test', 'demo', '--send', '--url', service.url, '--wait', '20'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await eventually(() => stderr.includes(`Waiting for ${pending.event_id}: queued`), 'the progress line', 15_000);
      await events.putAll([{ ...pending, status: 'delivered', reply: 'all good', updated_at: new Date().toISOString() }]);
      expect(await exited).toBe(0);
      expect(stdout).toContain('Outcome: delivered');
      expect(stdout).not.toContain('Waiting');
    } finally {
      child.kill();
      await service.close();
    }
  }, 40_000);
});

test('every command\'s --help has an example', async () => {
  const commands = [[], ['webhook'], ['secrets'], ['serve'], ['console'], ['completion'], ...['subscribe', 'list', 'show', 'update', 'delete', 'pause', 'resume', 'test', 'events', 'replay'].map((c) => ['webhook', c]), ['secrets', 'set'], ['secrets', 'list']];
  const missing: string[] = [];
  // A few at a time: the machine is shared.
  for (let i = 0; i < commands.length; i += 4) {
    await Promise.all(commands.slice(i, i + 4).map(async (c) => {
      const help = await runCli([...c, '--help']);
      if (help.code !== 0 || !help.stdout.includes('Examples:')) missing.push(c.join(' ') || '(top level)');
    }));
  }
  expect(missing).toEqual([]);
  // completion's help is help, not the script yargs prints for any arguments.
  const completion = await runCli(['completion', '--help']);
  expect(completion.stdout).toContain('completion [bash|zsh]');
  expect(completion.stdout).not.toContain('_hookagent_yargs_completions');
}, 120_000);

test('serve --shutdown-grace that is not a number of seconds is a usage error (it became 10 s, or -1 became 0, silently)', async () => {
  for (const value of ['abc', '-1', '1e9']) {
    const result = await runCli(['serve', '--config-dir', configDir(), '--port', '0', '--shutdown-grace', value]);
    expect({ value, code: result.code, stderr: result.stderr }).toEqual({ value, code: 2, stderr: expect.stringContaining(`--shutdown-grace must be a number of seconds from 0 to 3600 (got "${value}")`) });
  }
}, 60_000);

test('every error says what to do next', async () => {
  const dir = configDir();
  // On the PATH as hookagent (a link to this CLI, as npm link makes): the hint's commands are written so.
  const onPath = mkdtempSync(join(tmpdir(), 'hookagent-bin-'));
  symlinkSync(join(__dirname, '..', '..', 'bin', 'hookagent.cjs'), join(onPath, 'hookagent'));
  // With $HOOKAGENT_CONFIG_DIR the directory is the default one: hints carry no --config-dir (see firsthour5.e2e).
  const missing = await runCli(['webhook', 'show', 'ghost'], { HOOKAGENT_CONFIG_DIR: dir, PATH: `${onPath}:/usr/bin:/bin`, npm_lifecycle_event: '' });
  expect(missing.code).toBe(1);
  expect(missing.stderr).toBe("error: No subscription named 'ghost'\nSee the names with 'hookagent webhook list', or create one with 'hookagent webhook subscribe <name>'.\n");
  // From a checkout: as it can be pasted there.
  const fromCheckout = await runCli(['webhook', 'show', 'ghost'], { HOOKAGENT_CONFIG_DIR: dir, PATH: '/usr/bin:/bin', npm_lifecycle_event: '' });
  expect(fromCheckout.stderr).toBe("error: No subscription named 'ghost'\nSee the names with 'npx hookagent webhook list', or create one with 'npx hookagent webhook subscribe <name>'.\n");
  const paused = await runCli(['--config-dir', dir, 'webhook', 'pause', 'ghost'], { PATH: '/usr/bin:/bin', npm_lifecycle_event: '' });
  expect(paused.stderr).not.toMatch(/'hookagent /);
  const usage = await runCli(['--config-dir', dir, 'webhook', 'frobnicate']);
  expect(usage.code).toBe(2);
  expect(usage.stderr).toContain('Run with --help for usage and an example.');
  const open = await runCli(['--config-dir', dir, 'console', '--host', '0.0.0.0']);
  expect(open.code).toBe(1);
  expect(open.stderr).toContain('add --auth-token');
  // A message that already says what to do gets no second hint; an unknown code gets --help.
  expect(hintFor('service_unreachable', "Nothing answers: start the service with 'hookagent serve'")).toBeUndefined();
  expect(hintFor('weird', 'Something broke')).toContain('--help');
});
