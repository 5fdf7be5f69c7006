/**
 * A console over a real local store (dynalite on disk) seeded with subscriptions and
 * events, an in-memory request log, served on 127.0.0.1 at a free port.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newEventId } from '../../functions/core/ids';
import { systemClock } from '../../functions/core/ports';
import type { EventRecord, EventStatus, Subscription } from '../../functions/core/types';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import type { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import type { SqliteQueue } from '../../functions/local/sqlite/queue';
import type { SqliteSubscriptionStore } from '../../functions/local/sqlite/subscriptions';
import type { ConsoleSources } from '../../cli/console/data';
import { createConsoleHandler, type ConsoleOptions } from '../../cli/console/handler';
import { listenConsole } from '../../cli/console/command';
import { MemoryRequestLog } from '../support/memory-request-log';

export const SUB_SECRET = 'whsec_c3VwZXJzZWNyZXRzdWJzY3JpcHRpb25zZWNyZXQxMjM=';
export const ALERT_SECRET = 'whsec_YWxlcnRzc2VjcmV0YWxlcnRzc2VjcmV0YWxlcnRzMTI=';
export const CONFIG_TOKEN = 'ghp_configtokenvalue0123456789';

export interface ConsoleFixture {
  url: string;
  store: LocalRuntime;
  events: SqliteEventLog;
  subscriptions: SqliteSubscriptionStore;
  queue: SqliteQueue;
  requests: MemoryRequestLog;
  rich: EventRecord;
  addEvent(overrides: Partial<EventRecord> & { subscription: string }, atMs?: number): Promise<EventRecord>;
  close(): Promise<void>;
}

const subscription = (name: string, secret: string, extra: Partial<Subscription> = {}): Subscription => ({
  name, events: [], skills: [], deliver: ['log'], state: 'active', secret,
  created_at: '2026-11-01T10:00:00.000Z', updated_at: '2026-11-01T10:00:00.000Z', ...extra,
});

export function record(name: string, atMs: number, status: EventStatus, extra: Partial<EventRecord> = {}): EventRecord {
  const id = newEventId(atMs);
  const at = new Date(atMs).toISOString();
  const source = extra.source ?? (name === 'alerts' ? 'custom' : 'github');
  const event = extra.event ?? (source === 'custom' ? 'alert' : 'pull_request');
  return {
    event_id: id, subscription: name, status, source, event, ...(source === 'github' ? { action: 'opened' } : {}),
    delivery_id: `d-${id.slice(-8)}`, received_at: at, updated_at: new Date(atMs + 2400).toISOString(), attempts: 1,
    message: { v: 1, event_id: id, subscription: name, source, event, delivery_id: `d-${id.slice(-8)}`, received_at: at, payload: { number: 1 } },
    ...extra,
  };
}

export async function startConsoleFixture(options: ConsoleOptions = {}): Promise<ConsoleFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-console-'));
  const store = await openLocalRuntime(join(dir, 'data'), { role: 'serve', clock: systemClock, visibilityTimeoutMs: 60_000 });
  const { subscriptions, events, queue } = store;
  const requests = new MemoryRequestLog();
  await subscriptions.create(subscription('pr-review', SUB_SECRET, { events: ['pull_request.opened'], skills: ['code-review'], deliver: ['codehost_comment'], description: 'Reviews every new pull request', filters: ['pull_request.draft == false'] }));
  await subscriptions.create(subscription('alerts', ALERT_SECRET, { deliver: ['messenger'], description: 'Alertmanager alerts to Telegram' }));

  const now = Date.now();
  const hour = 3600_000;
  const seeded: EventRecord[] = [];
  const outcomes: EventStatus[] = ['delivered', 'delivered', 'suppressed', 'delivered', 'failed', 'delivered'];
  for (let i = 0; i < 18; i += 1) {
    const name = i % 3 === 0 ? 'alerts' : 'pr-review';
    const status = outcomes[i % outcomes.length]!;
    seeded.push(record(name, now - (i * 1.3 + 0.5) * hour, status, {
      usage: { provider: 'anthropic', model: 'claude-sonnet-4-5', input_tokens: 1800 + i * 37, output_tokens: 420 + i * 11, steps: 2 },
      timings: { total_ms: 4000 + i * 350 },
      ...(status === 'failed' ? { error: { code: 'delivery_failed', message: 'Telegram answered 400: chat not found' } } : {}),
    }));
  }
  const richAt = now - 10 * 60_000;
  const rich = record('pr-review', richAt, 'delivered', {
    delivery_id: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    prompt: 'Review the pull request https://github.test/octo/app/pull/7 titled "Add retry to uploads".',
    reply: 'Looks good overall. One finding: the retry loop never backs off.',
    targets: { codehost_comment: { status: 'delivered', detail: 'https://github.test/octo/app/pull/7#issuecomment-101', at: new Date(richAt + 5000).toISOString() } },
    // Prompt caching on: the cache reads and writes count as the run's tokens too.
    usage: { provider: 'anthropic', model: 'claude-sonnet-4-5', input_tokens: 2310, output_tokens: 512, cache_read_tokens: 4800, cache_write_tokens: 1200, steps: 3 },
    timings: { total_ms: 5123 },
    transcript_ref: JSON.stringify([{ role: 'assistant', tool_call: { name: 'http_get', input: { url: 'https://github.test/octo/app/pull/7.diff' } } }, { role: 'tool', name: 'http_get', result: '+ retry()' }]),
  });
  rich.message = {
    ...rich.message, delivery_id: rich.delivery_id,
    payload: { action: 'opened', number: 7, pull_request: { title: 'Add retry to uploads', html_url: 'https://github.test/octo/app/pull/7' },
      repository: { full_name: 'octo/app' }, hook: { config: { secret: 'payload-hook-secret-value' } }, leaked: `copied ${SUB_SECRET} here`, note: `token ${CONFIG_TOKEN}` },
  };
  await events.putAll([...seeded, rich]);

  await requests.record({
    request_id: 'r1', received_at: new Date(richAt).toISOString(), endpoint: 'github', method: 'POST', status: 202, outcome: 'accepted', event: 'pull_request', action: 'opened',
    delivery_id: rich.delivery_id, event_id: rich.event_id, source_ip: '140.82.115.1', header_names: ['content-type', 'x-github-event', 'x-github-delivery', 'x-hub-signature-256'],
    candidates: [{ subscription: 'pr-review', matched: true, reason: 'event pull_request.opened matches' }, { subscription: 'alerts', matched: false, reason: 'no event filter matches pull_request.opened' }],
  });
  await requests.record({
    request_id: 'r2', received_at: new Date(now - 5 * 60_000).toISOString(), endpoint: 'github', method: 'POST', status: 401, outcome: 'rejected_signature',
    header_names: ['x-hub-signature-256'], message: 'Signature does not match', count: 3,
  });

  const sources: ConsoleSources = {
    subscriptions, events, queue, payloads: store.payloads, requests,
    publicUrl: 'https://hooks.example.com', where: `the local store in ${join(dir, 'data')}`, secretValues: () => [CONFIG_TOKEN],
  };
  const handler = createConsoleHandler(sources, options);
  const server: Server = createServer((req, res) => void handler(req, res).then((handled) => {
    if (!handled) res.writeHead(404).end();
  }));
  const url = (await listenConsole(server, 0, '127.0.0.1')).replace(/\/console$/, '');
  return {
    url, store, events, subscriptions, queue, requests, rich,
    addEvent: async (overrides, atMs = Date.now()) => {
      const r = record(overrides.subscription, atMs, overrides.status ?? 'queued', overrides);
      await events.putAll([r]);
      return r;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}
