/**
 * Bench 4: one SQS batch of 10 messages through the worker handler, with an agent that
 * takes 1 s per run, over the local store serve uses (dynalite tables, payload files):
 * the records run side by side, so the batch takes about one agent run, not ten.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { echoAgent, type Agent } from '../../functions/core/agent/agent';
import { parseConfig, resolveConfig } from '../../functions/core/config/load';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { silentLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage } from '../../functions/core/types';
import { toSqsRecord } from '../../functions/local/consumer';
import { openLocalRuntime } from '../../functions/local/compose';
import { createWorkerHandler } from '../../functions/worker/batch';
import { median, type Measurement } from './stats';

const AGENT_DELAY_MS = 1_000;
const BATCH = 10;
const ROUNDS = 3;

export async function benchWorkerConcurrency(): Promise<Measurement> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-bench-worker-'));
  const store = await openLocalRuntime(join(dir, 'data'), { role: 'cli', clock: systemClock });
  try {
    const parsed = parseConfig('');
    if (!parsed.ok) throw new Error(parsed.error.message);
    const resolved = await resolveConfig(parsed.value, { get: async () => undefined });
    if (!resolved.ok) throw new Error(resolved.error.message);
    const subscriptions = store.subscriptions;
    await subscriptions.create({ name: 'bench', events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x' });
    // Stands in for an LLM provider: answers after a fixed delay.
    const slowAgent: Agent = { run: async (request) => { await new Promise((resolve) => setTimeout(resolve, AGENT_DELAY_MS)); return echoAgent.run(request); } };
    const handler = createWorkerHandler(store.workerDeps({
      // agent.concurrency as large as the batch: this measures that a batch's records run side by side.
      agent: slowAgent, skills: new SkillLibrary(undefined), targets: createDeliveryTargets(resolved.value.delivery),
      config: { ...resolved.value, agent: { ...resolved.value.agent, concurrency: BATCH } }, logger: silentLogger,
    }));
    const times: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const records = Array.from({ length: BATCH }, (_, i) => {
        const message: QueueMessage = {
          v: 1, event_id: `evt_bench_${round}_${i}`, subscription: 'bench', source: 'custom', event: 'custom', delivery_id: `d${round}-${i}`,
          received_at: new Date().toISOString(), payload: { n: i },
        };
        return toSqsRecord({ messageId: `m${round}-${i}`, receiptHandle: `r${round}-${i}`, body: JSON.stringify(message), receiveCount: 1, sentAt: Date.now() }, 'arn:aws:sqs:local:000000000000:bench');
      });
      const start = performance.now();
      const result = await handler({ Records: records } satisfies SQSEvent);
      times.push((performance.now() - start) / 1000);
      if (result.batchItemFailures.length > 0) throw new Error(`${result.batchItemFailures.length} records of the batch failed`);
    }
    const seconds = median(times);
    return {
      name: `worker: batch of ${BATCH} with a ${AGENT_DELAY_MS / 1000} s agent (median of ${ROUNDS})`, value: seconds, unit: 's', target: '≤ 1.5 s', met: seconds <= 1.5,
      floor: `one agent run: ${AGENT_DELAY_MS / 1000} s (${BATCH} one after another: ${(BATCH * AGENT_DELAY_MS) / 1000} s)`,
      detail: { seconds: times },
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
