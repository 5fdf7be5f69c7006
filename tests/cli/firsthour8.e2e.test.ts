/**
 * The first hour from a fresh HOME (hunt 8), through the built CLI and serve:
 * - an empty environment variable is unset for the CLI as for serve, so the `.env` value
 *   counts (`status`, `test --send`);
 * - `--config-dir ''` (a script's `"$DIR"` with DIR unset) is a usage error, never the
 *   default store;
 * - the local store, which holds every subscription secret, is its owner's alone;
 * - the README's GitHub walkthrough hands `gh webhook forward` the secret it generated;
 * - `--payload -` reads standard input; `events --follow` of a deleted subscription says why.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { startServe, stopServe, type Serve } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('an empty environment variable and .env', () => {
  let serve: Serve | undefined;
  afterAll(async () => {
    if (serve) await stopServe(serve);
  });
  const dir = tempConfigDir('webhooks:\n  github: { secret: ${GITHUB_WEBHOOK_SECRET} }\n', 'hookagent-emptyvar-');
  writeFileSync(join(dir, '.env'), 'GITHUB_WEBHOOK_SECRET=from-dotenv\n');
  const env = { GITHUB_WEBHOOK_SECRET: '' };

  test('serve takes the .env value (the control)', async () => {
    serve = await startServe(dir, env);
    expect(serve.output()).not.toContain('/webhooks/github refuses every request');
    expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'pr', '--events', 'pull_request', '--agent', 'none', '--deliver', 'log'], env)).code).toBe(0);
  }, 60_000);

  test('status says the variable is set (it is, in .env); before, "missing" with exit 3', async () => {
    const status = await runCli(['--config-dir', dir, 'status', '--json'], env);
    const report = JSON.parse(status.stdout) as { secrets: { missing: string[] }; attention: string[] };
    expect(report.secrets.missing).toEqual([]);
    expect(report.attention.join('\n')).not.toContain('set neither in the environment nor in');
  });

  test('test --send signs with the .env value, as serve verifies', async () => {
    const sent = await runCli(['--config-dir', dir, 'webhook', 'test', 'pr', '--send', '--url', serve!.url, '--wait', '10'], env);
    expect(sent.stderr).not.toContain('which is not set');
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain('POST /webhooks/github → 202');
  }, 60_000);
});

describe('--config-dir given empty', () => {
  test.each([
    [['webhook', 'subscribe', 'scratch', '--config-dir', '']],
    [['--config-dir=', 'webhook', 'list']],
    [['serve', '--config-dir', '  ']],
  ])('%j is a usage error (exit 2), and the default store is not touched', async (args) => {
    const home = mkdtempSync(join(tmpdir(), 'hookagent-home-'));
    const result = await runCli(args, { HOME: home, HOOKAGENT_CONFIG_DIR: '' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--config-dir needs a directory (it was given empty)');
    expect(existsSync(join(home, '.hookagent'))).toBe(false);
  });
});

describe('the local store is its owner\'s alone', () => {
  test('a new store: config dir and data dir 0700, the database and its WAL 0600 (it holds whsec_ secrets)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'hookagent-perm-'));
    const dir = join(home, '.hookagent');
    const created = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'alerts']);
    expect(created.code).toBe(0);
    const db = join(dir, 'data', 'hookagent.db');
    expect(readFileSync(db).includes(Buffer.from('whsec_')) || readFileSync(`${db}-wal`).includes(Buffer.from('whsec_'))).toBe(true);
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(join(dir, 'data'))).toBe(0o700);
    expect(modeOf(db)).toBe(0o600);
    for (const side of ['-wal', '-shm']) if (existsSync(`${db}${side}`)) expect(modeOf(`${db}${side}`)).toBe(0o600);
  });

  test('a store an earlier version left readable by everyone is tightened when opened', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookagent-perm-old-'));
    expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'alerts'])).code).toBe(0);
    const data = join(dir, 'data');
    const db = join(data, 'hookagent.db');
    chmodSync(data, 0o755);
    chmodSync(db, 0o644);
    expect((await runCli(['--config-dir', dir, 'webhook', 'list'])).code).toBe(0);
    expect(modeOf(data)).toBe(0o700);
    expect(modeOf(db)).toBe(0o600);
  });
});

describe('README, GitHub walkthrough', () => {
  test('step 4 hands gh webhook forward the secret step 2 generated (the lines run as written)', () => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    const step2 = readme.split('\n').filter((l) => /^\s*echo "GITHUB_WEBHOOK_SECRET=/.test(l)).map((l) => l.trim());
    const step4 = /`(gh webhook forward [^`]+)`/.exec(readme)?.[1];
    expect(step2).toHaveLength(1);
    expect(step4).toBeDefined();
    const home = mkdtempSync(join(tmpdir(), 'hookagent-readme-'));
    mkdirSync(join(home, '.hookagent'));
    // As a user pastes them, in one shell; `gh` stands in for the GitHub CLI and prints the secret it was given.
    const script = ['gh() { while [ $# -gt 0 ]; do if [ "$1" = --secret ]; then printf "%s" "$2"; fi; shift; done; }', ...step2, step4 as string].join('\n');
    const given = execFileSync('bash', ['-c', script], { env: { PATH: process.env.PATH, HOME: home } }).toString();
    const inDotEnv = /GITHUB_WEBHOOK_SECRET=(.*)/.exec(readFileSync(join(home, '.hookagent', '.env'), 'utf8'))?.[1];
    expect(inDotEnv).toMatch(/^[0-9a-f]{64}$/);
    expect(given).toBe(inDotEnv);
  });
});

describe('small first-hour papercuts', () => {
  test('--payload - reads the payload from standard input (test, and a clear error for none)', async () => {
    const dir = tempConfigDir('', 'hookagent-stdin-');
    expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'pushes', '--events', 'push', '--agent', 'none', '--prompt', 'ref {ref}'])).code).toBe(0);
    const rendered = await runCli(['--config-dir', dir, 'webhook', 'test', 'pushes', '--payload', '-'], {}, '{"ref":"refs/heads/main"}');
    expect(rendered.code).toBe(0);
    expect(rendered.stdout).toContain('ref refs/heads/main');
    const empty = await runCli(['--config-dir', dir, 'webhook', 'test', 'pushes', '--payload', '-'], {}, '');
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('--payload is not valid JSON');
  });

  test("events --follow of a deleted subscription says it was deleted and how to list what it left (not 'No subscription named')", async () => {
    const dir = tempConfigDir('', 'hookagent-follow-deleted-');
    const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args]);
    expect((await hk('webhook', 'subscribe', 'gone', '--agent', 'none', '--deliver', 'log')).code).toBe(0);
    expect((await hk('webhook', 'test', 'gone', '--dry-run')).code).toBe(0);
    const { openLocalRuntime } = await import('../../functions/local/compose');
    const { systemClock } = await import('../../functions/core/ports');
    const { eventRecord } = await import('../../functions/core/worker/record');
    const store = await openLocalRuntime(join(dir, 'data'), { role: 'serve', clock: systemClock });
    try {
      const now = new Date().toISOString();
      await store.events.putAll([eventRecord({ v: 1, event_id: 'evt_gone1', subscription: 'gone', source: 'custom', event: 'alert', delivery_id: 'd1', received_at: now, payload: {} }, 'delivered', now)]);
    } finally {
      await store.close();
    }
    expect((await hk('webhook', 'delete', 'gone')).code).toBe(0);
    expect((await hk('webhook', 'events', 'gone')).code).toBe(0);
    const followed = await hk('webhook', 'events', 'gone', '--follow');
    expect(followed.code).toBe(1);
    expect(followed.stderr).toMatch(/'gone' was deleted, so no new events come to follow; '.*hookagent .*webhook events gone' lists the ones it left/);
    const never = await hk('webhook', 'events', 'never', '--follow');
    expect(never.stderr).toContain("No subscription named 'never'");
  });
});
