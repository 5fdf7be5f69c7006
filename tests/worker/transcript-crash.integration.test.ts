/**
 * The process dies (kill -9) after a retry's agent run stored its combined transcript in the
 * payload store and before the record that points at it was written (hunt 9, faults). Before,
 * the payload under the event's one fixed key (`transcript_<event>_<subscription>`) was
 * overwritten in place, so the committed record's `transcript_ref` pointed at a run its usage
 * never counted, and the next run's transcript showed 3 runs while its usage counted 2.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loopAgent } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { loadTranscript } from '../../functions/core/agent/transcript-store';
import { logTarget } from '../../functions/core/delivery/log-target';
import { silentLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { EventRecord, QueueMessage } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { Killed } from '../support/crash';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { MemoryEventLog, MemorySubscriptionStore } from '../support/memory';
import { ManualClock } from '../support/recording-queue';

let llm: LocalServer;
let script: Array<[number, unknown]> = [];
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => {
    const [status, body] = script.shift() ?? [500, { error: { message: 'no script' } }];
    sendJson(res, status, body);
  });
});
const dirs: string[] = [];
afterAll(async () => {
  await llm.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const usage = { prompt_tokens: 100, completion_tokens: 20 };
const toolCall = { choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: 'Let me look that up.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"db-1"}' } }] } }], usage };
const answer = (n: number) => ({ choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `Answer of run ${n}.` } }], usage });

test('kill -9 between a retry run\'s transcript write and its record: the transcript never shows a run the usage does not count', async () => {
  const subscriptions = new MemorySubscriptionStore();
  await subscriptions.create({ name: 's', events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x', prompt: 'Alert {alert} {detail}' });
  const events = new MemoryEventLog();
  /** While set, the process "dies" at the first record write that stores a reply (the write never happens). */
  let dieAtReply = false;
  /** Once dead, no later write reaches the store (a killed process writes nothing more). */
  let dead = false;
  const update = events.update.bind(events);
  events.update = (async (id: string, sub: string, changes: Partial<EventRecord>, options?: unknown) => {
    if (dieAtReply && changes.reply !== undefined) dead = true;
    if (dead) throw new Killed();
    return (update as (...a: unknown[]) => Promise<void>)(id, sub, changes, options);
  }) as typeof events.update;
  const putAll = events.putAll.bind(events);
  events.putAll = (async (records: EventRecord[]) => {
    if (dead) throw new Killed();
    return putAll(records);
  }) as typeof events.putAll;
  const dir = mkdtempSync(join(tmpdir(), 'transcript-crash-'));
  dirs.push(dir);
  const deps: WorkerDeps = {
    events, subscriptions, payloads: new FilePayloadStore(join(dir, 'payloads')),
    agent: loopAgent(openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm' }), {}, { timeout_ms: 1000, codehost: {} }),
    skills: new SkillLibrary(undefined), targets: { log: logTarget },
    config: { agent: { provider: 'openai', model: 'm', timeout_ms: 5000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } },
    clock: new ManualClock(), logger: silentLogger, maxReceiveCount: 5, deadLetters: { send: async () => {} },
  };
  // A long alert: the transcript is over 8 KB, so it goes to the payload store.
  const m: QueueMessage = { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd1', received_at: '2026-11-22T12:00:00.000Z', payload: { alert: 'DiskFull', detail: 'x'.repeat(12_000) } };

  // Receive 1: the run spends tokens, then the provider fails (retryable): usage and transcript of run 1 recorded.
  script = [[200, toolCall], [503, { error: { message: 'upstream overloaded' } }]];
  expect(await processMessage(JSON.stringify(m), 1, deps)).toMatchObject({ kind: 'retry' });
  const first = await events.get('evt_1', 's');
  expect(first?.transcript_ref?.startsWith('{')).toBe(false);

  // Receive 2: run 2 answers; the process is killed before the record with its reply is written.
  script = [[200, answer(2)]];
  dieAtReply = true;
  await expect(processMessage(JSON.stringify(m), 2, deps)).rejects.toThrow(Killed);
  dieAtReply = false;
  dead = false;
  const committed = await events.get('evt_1', 's');
  // What survived the crash: the record of receive 1 (usage of run 1 only)...
  expect(committed?.usage).toMatchObject({ input_tokens: 100, steps: 1 });
  // ...and the transcript it points at should still be run 1's alone.
  const pointed = await loadTranscript(deps.payloads, committed?.transcript_ref);
  const pointedRuns = [...(pointed?.earlier ?? []), pointed!];
  const afterCrash = { runs: pointedRuns.length, steps: pointedRuns.reduce((n, t) => n + t.steps.length, 0) };

  // Receive 3 (after the restart): run 3 answers and is delivered.
  script = [[200, answer(3)]];
  expect(await processMessage(JSON.stringify(m), 3, deps)).toEqual({ kind: 'ack', status: 'delivered' });
  const record = await events.get('evt_1', 's');
  const transcript = await loadTranscript(deps.payloads, record?.transcript_ref);
  const runs = [...(transcript!.earlier ?? []), transcript!];
  // The invariant tests/worker/transcript-retry checks: the story shows exactly the runs the usage counts.
  expect({
    afterCrash,
    afterRetry: { runs: runs.length, steps: runs.reduce((n, t) => n + t.steps.length, 0), replies: runs.map((t) => t.reply ?? null) },
  }).toEqual({
    afterCrash: { runs: 1, steps: committed!.usage!.steps },
    afterRetry: { runs: 2, steps: record!.usage!.steps, replies: [null, 'Answer of run 3.'] },
  });
});
