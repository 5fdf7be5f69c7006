/**
 * The reader of the CLI's output goes away before the end (`… | head -1`): the CLI ends
 * quietly with exit 0 (no EPIPE stack trace, no exit 1), for a one-shot command whose
 * output is larger than a pipe holds and for `events --follow`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../functions/core/ports';
import type { RequestRecord } from '../../functions/core/types';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { record } from '../console/fixture';
import { BIN, buildCli, tempConfigDir } from '../support/cli';

beforeAll(() => buildCli(), 60_000);

/**
 * Runs the CLI with stdout on a pipe and closes the pipe's reading end after the first
 * chunk, as `head -1` does once it has its line; `afterClose` runs then. Resolves with the
 * exit code and stderr.
 */
function runAndCloseReader(args: string[], afterClose: () => Promise<void> = async () => {}): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; firstChunk: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let firstChunk = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.once('data', (chunk: Buffer) => {
      firstChunk = chunk.toString();
      child.stdout.destroy();
      afterClose().catch(reject);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr, firstChunk }));
  });
}

describe('a reader that goes away', () => {
  const dir = tempConfigDir('', 'hookagent-reader-gone-');
  let store: LocalRuntime;

  beforeAll(async () => {
    mkdirSync(join(dir, 'data'), { recursive: true });
    store = await openLocalRuntime(join(dir, 'data'), { role: 'serve', clock: systemClock });
    await store.subscriptions.create({ name: 'demo', events: [], skills: [], deliver: ['log'], state: 'active', secret: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', created_at: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z' });
    // 1,000 request-log rows of about 1 KB: the JSON is many times what a pipe holds (64 KiB).
    const now = Date.now();
    for (let i = 0; i < 1000; i += 1) {
      const entry: RequestRecord = {
        request_id: `req_${String(i).padStart(6, '0')}`, received_at: new Date(now - i * 1000).toISOString(), endpoint: 'custom/demo', method: 'POST',
        status: 200, outcome: 'not_handled', event: 'deploy', header_names: ['content-type', 'user-agent', 'x-request-id', 'authorization'],
        candidates: [{ subscription: 'demo', matched: false, reason: `event filters ${'x'.repeat(800)} do not match custom:deploy` }],
      };
      await store.requests.record(entry);
    }
    expect(await store.requests.list({ limit: 1000 })).toHaveLength(1000);
    await store.events.putAll([record('demo', now - 60_000, 'delivered'), record('demo', now - 50_000, 'failed')]);
  }, 60_000);
  afterAll(async () => store.close());

  test('webhook requests --json | head -1: exit 0, nothing on stderr', async () => {
    const result = await runAndCloseReader(['--config-dir', dir, 'webhook', 'requests', '--limit', '1000', '--json']);
    expect(result.firstChunk.startsWith('[')).toBe(true);
    expect(result.stderr).toBe('');
    expect([result.code, result.signal]).toEqual([0, null]);
  }, 30_000);

  test('webhook events <name> --follow | head -1: the next line written finds no reader, and follow stops with exit 0', async () => {
    const result = await runAndCloseReader(['--config-dir', dir, 'webhook', 'events', 'demo', '--follow', '--json'], async () => {
      // Something new to print after the reader left.
      await store.events.putAll([record('demo', Date.now(), 'queued')]);
    });
    expect(result.firstChunk).toContain('"subscription":"demo"');
    expect(result.stderr).toBe('');
    expect([result.code, result.signal]).toEqual([0, null]);
  }, 30_000);
});
