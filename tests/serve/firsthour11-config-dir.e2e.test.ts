/**
 * Hunt 11, the config dir:
 * - D1: a config dir an earlier version made 0755, or one the user made, kept `.env` (the
 *   real credentials) and config.yaml readable by every local user: serve and the CLI now
 *   tighten them, and say so when they cannot.
 * - D2: `status` on a config.yaml that does not validate (serve refused the edit) reports
 *   the local service, the error and the configuration serve keeps: exit 3, not exit 1.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, hkIn } from '../support/cli';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

const ENV = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

beforeAll(() => buildCli(), 60_000);

const serves: Serve[] = [];
afterAll(async () => {
  for (const s of serves) await stopServe(s);
});
async function serveOn(dir: string): Promise<Serve> {
  const s = await startServe(dir, ENV);
  serves.push(s);
  return s;
}

/** A config dir as an earlier version's `mkdirSync` (0755) or the user left it, with the walkthrough's `echo … >> .env` (0644). */
function openConfigDir(prefix: string, yaml?: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), prefix)), 'hookagent');
  mkdirSync(dir);
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, '.env'), 'GITHUB_WEBHOOK_SECRET=0123456789abcdef\nGITHUB_TOKEN=ghp_realLookingToken0123456789\n');
  chmodSync(join(dir, '.env'), 0o644);
  if (yaml !== undefined) {
    writeFileSync(join(dir, 'config.yaml'), yaml);
    chmodSync(join(dir, 'config.yaml'), 0o644);
  }
  return dir;
}

describe('the config dir that holds .env', () => {
  test('serve tightens a 0755 config dir, its 0644 .env and config.yaml (as it does data/)', async () => {
    const dir = openConfigDir('hookagent-fh11-serve-', 'webhooks:\n  github: { secret: ${GITHUB_WEBHOOK_SECRET} }\n');
    const serve = await serveOn(dir);
    expect({ dir: modeOf(dir), env: modeOf(join(dir, '.env')), config: modeOf(join(dir, 'config.yaml')), data: modeOf(join(dir, 'data')) })
      .toEqual({ dir: '700', env: '600', config: '600', data: '700' });
    expect(serve.output()).not.toContain('can be read by other local users');
    await stopServe(serve);
  }, 60_000);

  test('on first run in a directory the user made, the starter config.yaml and .env are tightened too', async () => {
    const dir = openConfigDir('hookagent-fh11-first-');
    const serve = await serveOn(dir);
    expect(serve.output()).toContain('Wrote a starter configuration');
    expect({ dir: modeOf(dir), env: modeOf(join(dir, '.env')), config: modeOf(join(dir, 'config.yaml')) }).toEqual({ dir: '700', env: '600', config: '600' });
    await stopServe(serve);
  }, 60_000);

  test('any CLI command opening the config dir tightens it; a directory hookagent has not used yet is left alone', async () => {
    const dir = openConfigDir('hookagent-fh11-cli-', '');
    expect((await hkIn(dir, 'webhook', 'list')).code).toBe(0);
    expect({ dir: modeOf(dir), env: modeOf(join(dir, '.env')), config: modeOf(join(dir, 'config.yaml')) }).toEqual({ dir: '700', env: '600', config: '600' });

    // No config.yaml and no data/: not hookagent's directory (yet), its mode is the user's.
    const plain = mkdtempSync(join(tmpdir(), 'hookagent-fh11-plain-'));
    chmodSync(plain, 0o755);
    const other = join(plain, 'notes.txt');
    writeFileSync(other, 'x');
    chmodSync(other, 0o644);
    expect((await hkIn(plain, 'status', '--json')).code).toBe(3);
    expect([modeOf(plain), modeOf(other)]).toEqual(['755', '644']);
  }, 60_000);

  test('a .env whose mode cannot be changed (a file system that refuses chmod; /proc here) is named in serve\'s start output and by status', async () => {
    const dir = openConfigDir('hookagent-fh11-refuse-', '');
    // /proc/self/oom_score_adj: owned by the reader, 0644, the same for serve and the CLI, and chmod
    // answers EPERM (as a FAT or some network mounts refuse it).
    const env = join(dir, '.env');
    rmSync(env);
    symlinkSync('/proc/self/oom_score_adj', env);
    const serve = await serveOn(dir);
    expect(serve.output()).toMatch(new RegExp(`warning: ${env.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} can be read by other local users \\(mode 644\\) and could not be made the owner's alone \\(chmod 600: EPERM\\); keep it on a file system that keeps file modes$`, 'm'));
    // The rest is tightened all the same.
    expect([modeOf(dir), modeOf(join(dir, 'config.yaml'))]).toEqual(['700', '600']);
    const status = await hkIn(dir, 'status', '--json');
    expect(status.code).toBe(3);
    const report = JSON.parse(status.stdout) as { attention: string[] };
    expect(report.attention).toEqual([expect.stringContaining(`${env} can be read by other local users (mode 644)`)]);
    await stopServe(serve);
  }, 60_000);
});

describe('status on a config.yaml that does not validate', () => {
  test('serve refused the edit (the README\'s unknown key): status reports serve, the error and the configuration it keeps; exit 3', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookagent-fh11-status-'));
    writeFileSync(join(dir, 'config.yaml'), 'webhooks:\n  max_payload_size: 1MB\n');
    const serve = await serveOn(dir);
    expect((await hkIn(dir, 'webhook', 'subscribe', 'quiet', '--events', 'push')).code).toBe(0);
    writeFileSync(join(dir, 'config.yaml'), 'webhooks:\n  max_paylod_size: 1MB\n');
    await eventually(() => serve.output().includes('still serving with the previous one'), 'the refused reload');
    const status = await hkIn(dir, 'status', '--json');
    expect({ code: status.code, stderr: status.stderr }).toEqual({ code: 3, stderr: '' });
    const report = JSON.parse(status.stdout) as Record<string, unknown> & { attention: string[] };
    expect(report).toMatchObject({
      mode: 'local', serve: { running: true, url: serve.url, health: { ok: true }, config: 'older than config.yaml/.env' },
      queue: { waiting: 0 }, dead_letters: { depth: 0 }, held: 0, subscriptions: { total: 1 }, secrets: null,
    });
    expect(report.attention).toEqual([expect.stringMatching(
      /^config\.yaml is invalid \(webhooks\.max_paylod_size: unknown key; did you mean 'max_payload_size'\?\): serve \(pid \d+\) refused the edited files and keeps the configuration it loaded at \d{4}-\d\d-\d\dT/,
    )]);
    const text = await hkIn(dir, 'status');
    expect(text.code).toBe(3);
    expect(text.stdout).toContain('secrets       - (config.yaml is invalid)');
    expect(text.stdout).toContain('Needs attention:\n  - config.yaml is invalid (webhooks.max_paylod_size');
  }, 60_000);

  test('serve not running: the error, and that serve will not start until it is fixed; exit 3', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookagent-fh11-status-down-'));
    writeFileSync(join(dir, 'config.yaml'), 'webhooks:\n  max_paylod_size: 1MB\n');
    const status = await hkIn(dir, 'status', '--json');
    expect({ code: status.code, stderr: status.stderr }).toEqual({ code: 3, stderr: '' });
    const report = JSON.parse(status.stdout) as { serve: { running: boolean }; attention: string[] };
    expect(report.serve.running).toBe(false);
    expect(report.attention).toEqual([
      expect.stringMatching(/^serve is not running/),
      "config.yaml is invalid (webhooks.max_paylod_size: unknown key; did you mean 'max_payload_size'?): serve refuses to start until it is fixed",
    ]);
    // Other commands still refuse it, and a deployment's status needs it.
    expect((await hkIn(dir, 'webhook', 'list')).code).toBe(1);
    const staged = await hkIn(dir, 'status', '--stage', 'dev');
    expect([staged.code, staged.stderr]).toEqual([1, expect.stringContaining('Invalid configuration')]);
  }, 60_000);
});
