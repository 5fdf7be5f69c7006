/**
 * Issue 14 item 8 on the SQLite store: a full disk. While no write can be made, ingest
 * answers 503 `unavailable` and serve stays up; every event answered 202 is kept; once
 * space returns, service resumes without a restart.
 *
 * Two ways to fill: a small tmpfs under the data dir when this runs as root (CI does),
 * with `hookagent serve` as a child process; and, always, SQLite's `max_page_count` on
 * serve's own runtime in this process (a database that may not grow answers SQLITE_FULL,
 * exactly as a full disk does).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { createIngest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { apiGatewayHandler } from '../../functions/ingest/api-gateway';
import { openLocalRuntime } from '../../functions/local/compose';
import { buildCli, runCli } from '../support/cli';
import { apiEvent } from '../support/requests';
import { eventually, startServe, stopServe } from '../support/serve';
import { Tally } from './tally';

const tally = new Tally('disk-full');
afterAll(() => tally.flush());

const body = (n: number) => JSON.stringify({ action: 'opened', issue: { number: n, title: `full-${n}` }, filler: 'x'.repeat(30_000) });

test('max_page_count reached: 503 unavailable, nothing accepted lost, service resumes without a restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-full-'));
  const runtime = await openLocalRuntime(dir, { role: 'serve', clock: systemClock });
  try {
    await runtime.subscriptions.create({ name: 'full', events: ['issues'], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x' });
    const pages = runtime.store.db.pragma('page_count', { simple: true }) as number;
    runtime.store.db.pragma(`max_page_count = ${pages + 40}`);
    const ingest = createIngest(runtime.ingestDeps({ webhooks: { github: { secret: ['gh'] }, max_payload_size: 1024 * 1024 } }, silentLogger));
    const handler = apiGatewayHandler(async () => ingest, silentLogger);
    const send = (n: number) => handler(apiEvent({
      path: '/webhooks/github', body: body(n),
      headers: { 'x-github-event': 'issues', 'x-github-delivery': `full-${n}`, 'x-hub-signature-256': signHub(body(n), 'gh') },
    }));
    const accepted: number[] = [];
    const refused: number[] = [];
    for (let n = 0; n < 40 && refused.length < 3; n++) {
      const result = await send(n);
      if (result.statusCode === 202) accepted.push(n);
      else {
        await tally.check(() => expect([result.statusCode, (JSON.parse(result.body ?? '{}') as { code?: string }).code]).toEqual([503, 'unavailable']));
        refused.push(n);
      }
    }
    expect(accepted.length).toBeGreaterThan(0);
    expect(refused.length).toBe(3);
    // Space returns: the same requests (the sender's retries) are accepted, no restart.
    runtime.store.db.pragma('max_page_count = 1073741823');
    for (const n of refused) await tally.check(async () => expect((await send(n)).statusCode).toBe(202));
    const queued = await runtime.events.listBySubscription('full', 1000);
    expect(queued.map((r) => r.delivery_id).sort()).toEqual([...accepted, ...refused].map((n) => `full-${n}`).sort());
    expect(await runtime.queue.size()).toBe(accepted.length + refused.length);
  } finally {
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

function mountTmpfs(path: string, size: string): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const root = mkdtempSync(join(tmpdir(), 'hookagent-tmpfs-'));
const mounted = mountTmpfs(root, '4m');
afterAll(() => {
  if (mounted) execFileSync('umount', ['-l', root], { stdio: 'ignore' });
  rmSync(root, { recursive: true, force: true });
});

// Needs root to mount a tmpfs (CI runs as root); the max_page_count test above runs everywhere.
(mounted ? test : test.skip)('a real full disk (tmpfs) under hookagent serve: 503 while full, nothing accepted lost, normal service once space returns', async () => {
  buildCli();
  const env = { GH_SECRET: 'full-secret' };
  const dir = join(root, 'cfg');
  mkdirSync(dir);
  writeFileSync(join(dir, 'config.yaml'), 'webhooks: { github: { secret: ${GH_SECRET} } }\n');
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'disk', '--events', 'issues'], env)).code).toBe(0);
  const serve = await startServe(dir, env, { quiet: true });
  const post = async (n: number) => {
    const response = await fetch(`${serve.url}/webhooks/github`, {
      method: 'POST', body: body(n), headers: { 'x-github-event': 'issues', 'x-github-delivery': `disk-${n}`, 'x-hub-signature-256': signHub(body(n), env.GH_SECRET) },
    });
    return [response.status, (await response.json()) as { code?: string }] as const;
  };
  try {
    expect((await post(0))[0]).toBe(202);
    // Fill the file system to the last block.
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${join(root, 'filler')}`, 'bs=64k'], { stdio: 'ignore' });
    } catch {
      // dd stops with ENOSPC: the disk is full.
    }
    const accepted = [0];
    const refused: number[] = [];
    for (let n = 1; n < 60 && refused.length < 3; n++) {
      const [status, answer] = await post(n);
      if (status === 202) accepted.push(n);
      else {
        await tally.check(() => expect([status, answer.code]).toEqual([503, 'unavailable']));
        refused.push(n);
      }
    }
    expect(refused.length).toBe(3);
    expect(serve.child.exitCode).toBeNull();
    rmSync(join(root, 'filler'));
    for (const n of refused) {
      await tally.check(async () => expect((await post(n))[0]).toBe(202));
      accepted.push(n);
    }
    await eventually(async () => {
      const result = await runCli(['--config-dir', dir, 'webhook', 'events', 'disk', '--json', '--limit', '1000'], env);
      const events = JSON.parse(result.stdout) as Array<{ status: string; delivery_id: string }>;
      return events.length === accepted.length && events.every((e) => e.status === 'delivered');
    }, 'every accepted event delivered', 60_000);
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
}, 120_000);
