/**
 * A stop reason hookagent does not know (an OpenAI-compatible `finish_reason` such as
 * Together's `eos`, an Anthropic `stop_reason` newer than hookagent): the reply may be
 * complete, so it is still posted, but honestly: a note under it says the model's reply ended
 * for a reason hookagent does not know, naming it, so it may be incomplete; the event
 * record's warnings, the transcript step (`stop_reason`) and a warn log line keep the raw
 * reason. Before, such a reply was posted exactly like a finished one. The reason is the
 * provider's text: shown cut, on one line, inside a code span it cannot leave.
 *
 * Local servers speak the OpenAI Chat Completions and Anthropic Messages wire formats and
 * the Telegram Bot API; the worker runs over a real SQLite store.
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { bedrockProvider } from '../../functions/aws/bedrock-provider';
import { transcriptLines } from '../../cli/webhook/event';
import type { Agent } from '../../functions/core/agent/agent';
import { anthropicProvider } from '../../functions/core/agent/anthropic';
import { loopAgent } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import type { Tool } from '../../functions/core/agent/tools';
import { loadTranscript } from '../../functions/core/agent/transcript-store';
import type { Config } from '../../functions/core/config/types';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage } from '../../functions/core/types';
import { processMessage } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import { SqliteSubscriptionStore } from '../../functions/local/sqlite/subscriptions';
import type { TestStore } from '../support/local-store';
import { useScriptedServer, type LocalServer } from '../support/local-http';
import { useStoreAndTelegram } from '../support/store-telegram';

let t: TestStore;
let telegram: LocalServer;
useStoreAndTelegram((store, server) => {
  t = store;
  telegram = server;
});
const openai = useScriptedServer([500, { error: { message: 'no script' } }]);
const anthropic = useScriptedServer([500, { type: 'error', error: { type: 'api_error', message: 'no script' } }]);
const bedrock = useScriptedServer([500, { message: 'no script' }]);

const usage = { prompt_tokens: 120, completion_tokens: 30 };
const completion = (content: string | null, finish_reason: unknown, extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1763900000, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content, ...extra }, finish_reason }], usage,
});
const message = (text: string, stop_reason: unknown) => ({
  id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [{ type: 'text', text }], stop_reason, stop_sequence: null, usage: { input_tokens: 40, output_tokens: 9 },
});
const openAiAgent = (tools: Record<string, Tool> = {}) => loopAgent(openAiProvider({ baseUrl: `${openai.server.url}/v1`, model: 'm' }), tools, { timeout_ms: 1000, codehost: {} });
const anthropicAgent = () => loopAgent(anthropicProvider({ baseUrl: anthropic.server.url, apiKey: 'sk-ant-test', model: 'claude-test', backoffMs: 5 }), {}, { timeout_ms: 1000, codehost: {} });

/** The note under a reply whose stop reason hookagent does not know, as posted. */
const note = (shown: string) => `_The model's reply above ended for a reason hookagent does not know (\`${shown}\`), so it may be incomplete._`;
const warning = (shown: string) => `the model's reply ended for a reason hookagent does not know (${shown}): it may be incomplete`;

const ANSWER = 'Disk is full on db-1: clean /var/log.';

/** One event of a subscription that posts to Telegram, run by `agent` through the worker. */
async function work(agent: Agent, provider: 'openai' | 'anthropic') {
  const subscriptions = new SqliteSubscriptionStore(t.store);
  await subscriptions.create({ name: 'alerts', events: [], skills: [], deliver: ['messenger'], state: 'active', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', secret: 'x', prompt: 'Alert: {alert}' });
  const queued: QueueMessage = { v: 1, event_id: 'evt_u', subscription: 'alerts', source: 'custom', event: 'alert', delivery_id: 'd-u', received_at: '2026-01-01T00:00:00Z', payload: { alert: 'disk 97%' } };
  const events = new SqliteEventLog(t.store);
  await events.putAll([{ event_id: 'evt_u', subscription: 'alerts', status: 'queued', source: 'custom', event: 'alert', delivery_id: 'd-u', received_at: queued.received_at, updated_at: queued.received_at, message: queued }]);
  const delivery: Config['delivery'] = { timeout_ms: 2_000, codehost: {}, messenger: { provider: 'telegram', bot_token: '4242:bot', chat_id: '-100', api_url: telegram.url } };
  const payloads = new FilePayloadStore(`${t.dir}/payloads`);
  const logs: string[] = [];
  const outcome = await processMessage(JSON.stringify(queued), 1, {
    events, subscriptions, payloads, agent, skills: new SkillLibrary(undefined), targets: createDeliveryTargets(delivery),
    config: { agent: { provider, model: 'm', timeout_ms: 5_000, max_steps: 4 }, delivery }, clock: { now: () => Date.now() }, logger: jsonLogger((line) => logs.push(line)), maxReceiveCount: 3,
  });
  const stored = await events.get('evt_u', 'alerts');
  return {
    outcome, stored, transcript: await loadTranscript(payloads, stored?.transcript_ref),
    posted: telegram.requests.map((r) => (JSON.parse(r.body) as { text: string }).text),
    logs: logs.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('through the worker: posted with a note, the reason kept in the record, transcript and log', () => {
  test('an OpenAI-compatible finish_reason hookagent does not know ("eos")', async () => {
    openai.script = [[200, completion(ANSWER, 'eos')]];
    const { outcome, stored, transcript, posted, logs } = await work(openAiAgent(), 'openai');
    expect(outcome).toEqual({ kind: 'ack', status: 'delivered' });
    expect(stored?.reply).toBe(`${ANSWER}\n\n${note('eos')}`);
    expect(posted).toEqual([`${ANSWER}\n\n${note('eos')}`]);
    expect(stored?.warnings).toContain(warning('eos'));
    expect(transcript?.steps).toEqual([expect.objectContaining({ stop: 'other', stop_reason: 'eos' })]);
    expect(logs).toContainEqual(expect.objectContaining({ level: 'warn', event_id: 'evt_u', subscription: 'alerts', provider: 'openai', model: 'm', stop_reason: 'eos' }));
  });

  test('an Anthropic stop_reason hookagent does not know', async () => {
    anthropic.script = [[200, message(ANSWER, 'sampling_done')]];
    const { outcome, stored, transcript, posted, logs } = await work(anthropicAgent(), 'anthropic');
    expect(outcome).toEqual({ kind: 'ack', status: 'delivered' });
    expect(posted).toEqual([`${ANSWER}\n\n${note('sampling_done')}`]);
    expect(stored?.warnings).toContain(warning('sampling_done'));
    expect(transcript?.steps).toEqual([expect.objectContaining({ stop: 'other', stop_reason: 'sampling_done' })]);
    expect(logs).toContainEqual(expect.objectContaining({ level: 'warn', provider: 'anthropic', stop_reason: 'sampling_done' }));
  });

  test('a [SILENT] answer stays silent (nothing is posted, so nothing is marked); the record and log still name the reason', async () => {
    openai.script = [[200, completion('Nothing to do here.\n[SILENT]', 'eos')]];
    const { outcome, stored, posted, logs } = await work(openAiAgent(), 'openai');
    expect(outcome).toEqual({ kind: 'ack', status: 'suppressed' });
    expect(posted).toEqual([]);
    expect(stored?.warnings).toContain(warning('eos'));
    expect(logs).toContainEqual(expect.objectContaining({ level: 'warn', stop_reason: 'eos' }));
  });

  test('a known end ("stop") is posted as it is: no note, no warning, no warn line', async () => {
    openai.script = [[200, completion(ANSWER, 'stop')]];
    const { outcome, stored, transcript, posted, logs } = await work(openAiAgent(), 'openai');
    expect(outcome).toEqual({ kind: 'ack', status: 'delivered' });
    expect(posted).toEqual([ANSWER]);
    expect(stored?.warnings ?? []).toEqual([]);
    expect(transcript?.steps[0]).not.toHaveProperty('stop_reason');
    expect(logs.filter((l) => l.level === 'warn')).toEqual([]);
  });
});

describe('the tool loop over the wire formats', () => {
  const run = (agent: Agent) => agent.run({
    system: 'S', prompt: 'P', rendered: 'P', allowedTools: ['lookup'], timeoutMs: 5000, maxSteps: 4,
    message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' }, payload: {},
  });

  test.each([
    ['a number', 7, '7'],
    ['an object', { type: 'eos', detail: 'end of sequence' }, '{"type":"eos","detail":"end of sequence"}'],
    ['true', true, 'true'],
    ['an empty array', [], '[]'],
    ['an empty string', '', '""'],
    ['only a line break', '\n', '"\\n"'],
    ['text with control and zero-width characters', 'e\u0007o\u200bs\r\n', 'e o s'],
  ])('finish_reason %s is named safely', async (_what, reason, shown) => {
    openai.script = [[200, completion(ANSWER, reason)]];
    const reply = await run(openAiAgent());
    expect(reply.text).toBe(`${ANSWER}\n\n${note(shown)}`);
    expect(reply.unknownStop).toBe(shown);
    expect(reply.run?.transcript.steps[0]).toMatchObject({ stop: 'other', stop_reason: shown });
  });

  test('a non-string Anthropic stop_reason is named safely too', async () => {
    anthropic.script = [[200, message(ANSWER, { reason: 'done' })]];
    const reply = await run(anthropicAgent());
    expect(reply.text).toBe(`${ANSWER}\n\n${note('{"reason":"done"}')}`);
  });

  test('a Bedrock stopReason hookagent does not know is named too', async () => {
    bedrock.script = [[200, { output: { message: { role: 'assistant', content: [{ text: ANSWER }] } }, stopReason: 'new_reason', usage: { inputTokens: 50, outputTokens: 10, totalTokens: 60 } }]];
    const client = new BedrockRuntimeClient({ endpoint: bedrock.server.url, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
    const reply = await run(loopAgent(bedrockProvider(client, 'anthropic.claude-test'), {}, { timeout_ms: 1000, codehost: {} }));
    expect(reply.text).toBe(`${ANSWER}\n\n${note('new_reason')}`);
    expect(reply.unknownStop).toBe('new_reason');
    // `webhook event` prints it with the step (the raw reason is in --json too).
    expect(transcriptLines(reply.run!.transcript)).toContain('    step 1 (stop: other "new_reason"):');
  });

  test('a very long reason is cut to 100 characters', async () => {
    openai.script = [[200, completion(ANSWER, 'x'.repeat(5000))]];
    const reply = await run(openAiAgent());
    const shown = `${'x'.repeat(100)}…`;
    expect(reply.text).toBe(`${ANSWER}\n\n${note(shown)}`);
    expect(reply.unknownStop).toBe(shown);
    expect(reply.run?.transcript.steps[0]?.stop_reason).toBe(shown);
  });

  test('a reason written as markdown, HTML, mentions and a quick action stays one line of code under the reply', async () => {
    const reason = '`@everyone` **done** <img src="https://evil.example/x.png">\n/approve @alice #12 _x_';
    openai.script = [[200, completion(ANSWER, reason)]];
    const reply = await run(openAiAgent());
    // Backticks cannot end the code span, a line break cannot start a line (/approve).
    expect(reply.text).toBe(`${ANSWER}\n\n${note('\'@everyone\' **done** <img src="https://evil.example/x.png"> /approve @alice #12 _x_')}`);
    // The record keeps the reason as the provider gave it, on one line.
    expect(reply.unknownStop).toBe('`@everyone` **done** <img src="https://evil.example/x.png"> /approve @alice #12 _x_');
  });

  test('a reply that leaves a code fence open cannot swallow the note', async () => {
    openai.script = [[200, completion('Run this:\n```sh\ndf -h', 'eos')]];
    const reply = await run(openAiAgent());
    expect(reply.text).toBe(`Run this:\n\`\`\`sh\ndf -h\n\`\`\`\n\n${note('eos')}`);
  });

  test('known reasons keep their behaviour: "stop" and "end_turn" are complete replies, "length" is asked again shorter', async () => {
    openai.script = [[200, completion(ANSWER, 'stop')], [200, completion('A long rev', 'length')], [200, completion('Short.', 'stop')]];
    const stopped = await run(openAiAgent());
    expect(stopped.text).toBe(ANSWER);
    expect(stopped.unknownStop).toBeUndefined();
    expect((await run(openAiAgent())).text).toBe('Short.');
    anthropic.script = [[200, message(ANSWER, 'end_turn')]];
    expect((await run(anthropicAgent())).text).toBe(ANSWER);
  });

  test('an unknown reason on a tool round is kept in its transcript step; the answer after it is not marked', async () => {
    const lookup: Tool = { name: 'lookup', description: 'Looks a thing up', parameters: { type: 'object' }, run: async () => 'found' };
    openai.script = [
      [200, completion(null, 'tool_calls_done', { tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] })],
      [200, completion(ANSWER, 'stop')],
    ];
    const reply = await run(openAiAgent({ lookup }));
    expect(reply.text).toBe(ANSWER);
    expect(reply.unknownStop).toBeUndefined();
    expect(reply.run?.transcript.steps.map((s) => [s.stop, s.stop_reason])).toEqual([['other', 'tool_calls_done'], ['end', undefined]]);
  });
});
