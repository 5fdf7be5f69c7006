/**
 * Providers that report no usage (some Ollama and vLLM setups answer Chat Completions
 * without `usage`, or with zeros): the run's tokens are estimated from the text sent and
 * received (~4 characters a token, agent/estimate.ts) and the run's usage says
 * `estimated: true`, so it is neither free nor passed off as the provider's figure.
 * A local server speaks the OpenAI Chat Completions wire format.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { CHARS_PER_TOKEN } from '../../functions/core/agent/estimate';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { runOf } from '../../functions/core/agent/run-record';
import type { Tool } from '../../functions/core/agent/tools';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let llm: LocalServer;
let script: unknown[] = [];
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift() ?? { error: { message: 'no script' } }));
});
afterAll(async () => llm.close());
beforeEach(() => {
  llm.requests.length = 0;
  script = [];
});

const lookup: Tool = {
  name: 'lookup', description: 'Looks a thing up', parameters: { type: 'object', properties: { q: { type: 'string' } } },
  run: async (input) => `found ${(input as { q: string }).q}`,
};
const request = (): AgentRequest => ({
  system: 'You triage alerts.', prompt: `Alert: ${'disk nearly full on db-1; '.repeat(20)}`, rendered: 'x', allowedTools: ['lookup'], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' }, payload: {},
});
const run = () => runToolLoop(request(), { provider: openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'llama3' }), tools: { lookup }, delivery: { timeout_ms: 1000, codehost: {} } });
const completion = (message: Record<string, unknown>, finish: string, usage?: unknown) => ({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'llama3', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }], ...(usage === undefined ? {} : { usage }),
});
const tokens = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

type Sent = { messages: Array<{ role: string; content: string | null; tool_calls?: Array<{ function: { name: string; arguments: string } }> }>; tools?: unknown[] };
/** The rule, recomputed from what the fake server received: messages (text and tool calls) and tool specs in, the reply out. */
function sentChars(body: string): number {
  const sent = JSON.parse(body) as Sent;
  const messages = sent.messages.reduce((n, m) => n + (m.content ?? '').length + (m.tool_calls ?? []).reduce((k, c) => k + c.function.name.length + c.function.arguments.length, 0), 0);
  return messages + (sent.tools ? JSON.stringify((sent.tools as Array<{ function: unknown }>).map((t) => t.function)).length : 0);
}

test('no usage on any turn: every turn is estimated from the text sent and received, and the run says so', async () => {
  const args = JSON.stringify({ q: 'disk' });
  script = [
    completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: args } }] }, 'tool_calls'),
    completion({ content: 'Disk is full on db-1: clean /var/log.' }, 'stop'),
  ];
  const reply = await run();
  expect(reply.text).toBe('Disk is full on db-1: clean /var/log.');
  const [first, second] = llm.requests.map((r) => sentChars(r.body));
  const input = tokens(first!) + tokens(second!);
  const output = tokens('lookup'.length + args.length) + tokens('Disk is full on db-1: clean /var/log.'.length);
  expect(reply.run?.usage).toMatchObject({ provider: 'openai', model: 'llama3', input_tokens: input, output_tokens: output, steps: 2, estimated: true });
  expect(input).toBeGreaterThan(100);
});

test.each([
  ['usage: null', null],
  ['usage: {}', {}],
  ['zeros', { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }],
  ['strings, not numbers', { prompt_tokens: '120', completion_tokens: '9' }],
  ['negative numbers', { prompt_tokens: -5, completion_tokens: -1 }],
])('a usage that counts nothing (%s) is estimated too', async (_name, usage) => {
  script = [completion({ content: 'ok then' }, 'stop', usage)];
  const reply = await run();
  expect(reply.run?.usage).toMatchObject({ input_tokens: tokens(sentChars(llm.requests[0]!.body)), output_tokens: tokens('ok then'.length), estimated: true });
});

test('a provider that reports usage is taken at its word: no estimate, no mark', async () => {
  script = [completion({ content: 'ok' }, 'stop', { prompt_tokens: 321, completion_tokens: 7, total_tokens: 328 })];
  const reply = await run();
  expect(reply.run?.usage).toMatchObject({ input_tokens: 321, output_tokens: 7 });
  expect(reply.run?.usage).not.toHaveProperty('estimated');
});

test('one turn reported, one not: the sum is marked estimated (part of it is)', async () => {
  script = [
    completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] }, 'tool_calls', { prompt_tokens: 500, completion_tokens: 20 }),
    completion({ content: 'done' }, 'stop'),
  ];
  const reply = await run();
  expect(reply.run?.usage).toMatchObject({ input_tokens: 500 + tokens(sentChars(llm.requests[1]!.body)), output_tokens: 20 + tokens(4), estimated: true });
});

test('a failed run (reply refused as empty) still carries its estimated tokens', async () => {
  script = [completion({ content: '   ' }, 'stop')];
  const error = await run().catch((e: unknown) => e);
  expect(error).toMatchObject({ code: 'agent_reply_empty' });
  expect(runOf(error)?.usage).toMatchObject({ input_tokens: tokens(sentChars(llm.requests[0]!.body)), output_tokens: 1, estimated: true });
});
