/**
 * The ingest Lambda's handler over real stores: DynamoDB adapters on dynalite, payloads
 * in a temporary directory, a recording queue and a hand-moved clock.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoRequestLog } from '../../functions/aws/request-log';
import { DynamoDebounceStore } from '../../functions/aws/debounce-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { parseConfig, resolveConfig } from '../../functions/core/config/load';
import type { Config } from '../../functions/core/config/types';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { createIngest } from '../../functions/core/ingest/service';
import { jsonLogger } from '../../functions/core/log';
import type { Subscription } from '../../functions/core/types';
import { apiGatewayHandler } from '../../functions/ingest/api-gateway';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from './dynalite';
import { ManualClock, RecordingQueue } from './recording-queue';

export const GITHUB_SECRET = 'gh-secret-for-tests';
export const GITLAB_SECRET = 'gl-secret-for-tests';

export interface Harness {
  handler: ReturnType<typeof apiGatewayHandler>;
  queue: RecordingQueue;
  clock: ManualClock;
  subscriptions: DynamoSubscriptionStore;
  events: DynamoEventLog;
  dedup: DynamoDedupStore;
  requests: DynamoRequestLog;
  debounce: DynamoDebounceStore;
  payloads: FilePayloadStore;
  dynamo: TestDynamo;
  logs: string[];
  addSubscription(fields: Partial<Subscription> & { name: string }): Promise<Subscription>;
  /** A handler over a different configuration, sharing the same stores. */
  withConfig(yaml: string, env?: Record<string, string>): Promise<Harness['handler']>;
  close(): Promise<void>;
}

export const DEFAULT_CONFIG = `
webhooks:
  github: { secret: \${GH_SECRET} }
  gitlab: { secret: \${GL_SECRET} }
  max_payload_size: 64KB
`;

export async function startHarness(yaml = DEFAULT_CONFIG, env: Record<string, string> = {}): Promise<Harness> {
  const dynamo = await startDynalite();
  const clock = new ManualClock(Date.now());
  const queue = new RecordingQueue();
  const logs: string[] = [];
  const logger = jsonLogger((line) => logs.push(line));
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  // Wired as functions/aws/compose-ingest.ts does: the claim and the records in one transaction, the commit with the request log.
  const dedup = new DynamoDedupStore(dynamo.client, dynamo.tables.dedup, clock, dynamo.tables.events);
  const requests = new DynamoRequestLog(dynamo.client, dynamo.tables.requests, clock, dynamo.tables.dedup);
  const debounce = new DynamoDebounceStore(dynamo.client, dynamo.tables.dedup, clock);
  const payloads = new FilePayloadStore(join(mkdtempSync(join(tmpdir(), 'hookagent-payloads-')), 'payloads'));

  const build = async (text: string, vars: Record<string, string>) => {
    const parsed = parseConfig(text);
    if (!parsed.ok) throw new Error(parsed.error.message);
    const resolved = await resolveConfig(parsed.value, { get: async (n) => vars[n] }, ['webhooks']);
    if (!resolved.ok) throw new Error(resolved.error.message);
    const config: Config = resolved.value;
    const ingest = createIngest({
      config, queue, dedup, events, payloads, clock, logger, requests, debounce,
      // TTL 0: every request sees the store as it is now.
      subscriptions: new SubscriptionCache(subscriptions, 0, clock),
    });
    return apiGatewayHandler(async () => ingest, logger);
  };
  const baseEnv = { GH_SECRET: GITHUB_SECRET, GL_SECRET: GITLAB_SECRET };
  const handler = await build(yaml, { ...baseEnv, ...env });

  return {
    handler, queue, clock, subscriptions, events, dedup, payloads, dynamo, logs, requests, debounce,
    async addSubscription(fields) {
      const now = new Date(clock.now()).toISOString();
      const subscription: Subscription = {
        events: [], skills: [], deliver: ['log'], state: 'active', created_at: now, updated_at: now,
        secret: `whsec_${Buffer.from(`secret-of-${fields.name}`).toString('base64')}`, ...fields,
      };
      await subscriptions.create(subscription);
      return subscription;
    },
    withConfig: (text, vars = {}) => build(text, { ...baseEnv, ...vars }),
    close: () => dynamo.close(),
  };
}

export function bodyOf(result: { body?: string }): Record<string, unknown> {
  return JSON.parse(result.body ?? 'null') as Record<string, unknown>;
}

/**
 * One harness for a test file: started before its tests and closed after them; before each
 * test the queue is emptied and every subscription deleted. `bind` receives it.
 */
export function useIngestHarness(bind: (harness: Harness) => void): void {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness();
    bind(harness);
  });
  afterAll(async () => harness?.close());
  beforeEach(async () => {
    if (!harness) return;
    harness.queue.sent.length = 0;
    for (const s of await harness.subscriptions.list()) await harness.subscriptions.delete(s.name);
  });
}
