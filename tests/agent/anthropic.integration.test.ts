/**
 * The Anthropic provider against a local server speaking the Messages wire format:
 * headers, tool-use round trip, cache_control on the system prompt and conversation,
 * usage with cache counts, stop reasons, 529 overloaded_error and 429 with retry-after.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { anthropicProvider, ANTHROPIC_VERSION } from '../../functions/core/agent/anthropic';
import { runToolLoop, SHORTER_PLEASE } from '../../functions/core/agent/loop';
import type { Tool } from '../../functions/core/agent/tools';
import { useScriptedServer, type ScriptedAnswer } from '../support/local-http';

type Body = { model: string; max_tokens: number; system: Array<Record<string, unknown>>; messages: Array<{ role: string; content: Array<Record<string, unknown>> }>; tools?: Array<{ name: string; input_schema: unknown }> };

const api = useScriptedServer([500, { type: 'error', error: { type: 'api_error', message: 'no script' } }]);

const lookup: Tool = {
  name: 'lookup', description: 'Looks a thing up', parameters: { type: 'object', properties: { q: { type: 'string' } } },
  run: async (input) => `found ${(input as { q: string }).q}`,
};
const request = (overrides: Partial<AgentRequest> = {}): AgentRequest => ({
  system: 'SYSTEM with skill instructions', prompt: '<untrusted-event-data>\nalert\n</untrusted-event-data>', rendered: 'alert',
  allowedTools: ['lookup'], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '', payload: {} },
  payload: {}, ...overrides,
});
const provider = () => anthropicProvider({ baseUrl: api.server.url, apiKey: 'sk-ant-test', model: 'claude-test', backoffMs: 5 });
const message = (content: unknown[], stop_reason: string, usage: Record<string, number> = { input_tokens: 10, output_tokens: 5 }) => ({
  id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content, stop_reason, stop_sequence: null, usage,
});
const run = (overrides: Partial<AgentRequest> = {}) => runToolLoop(request(overrides), { provider: provider(), tools: { lookup }, delivery: { timeout_ms: 1000, codehost: {} } });

test('tool-use round trip with x-api-key, anthropic-version, cache_control and usage including cache counts', async () => {
  api.script = [
    [200, message([{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'disk' } }], 'tool_use', { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 1500, cache_read_input_tokens: 0 })],
    [200, message([{ type: 'text', text: 'Disk is full on db-1.' }], 'end_turn', { input_tokens: 30, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 1500 })],
  ];
  const reply = await run({ maxTokens: 700 });
  expect(reply.text).toBe('Disk is full on db-1.');
  const [first, second] = api.server.requests;
  expect(first!.url).toBe('/v1/messages');
  expect(first!.headers['x-api-key']).toBe('sk-ant-test');
  expect(first!.headers['anthropic-version']).toBe(ANTHROPIC_VERSION);
  expect(first!.headers.authorization).toBeUndefined();
  const body1 = JSON.parse(first!.body) as Body;
  expect(body1.model).toBe('claude-test');
  expect(body1.max_tokens).toBe(700);
  expect(body1.system).toEqual([{ type: 'text', text: 'SYSTEM with skill instructions', cache_control: { type: 'ephemeral' } }]);
  expect(body1.tools).toEqual([{ name: 'lookup', description: 'Looks a thing up', input_schema: lookup.parameters }]);
  const body2 = JSON.parse(second!.body) as Body;
  expect(body2.messages).toEqual([
    { role: 'user', content: [{ type: 'text', text: request().prompt }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'disk' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: expect.stringMatching(/^<untrusted-data-([0-9a-f]+)>found disk<\/untrusted-data-\1>$/), cache_control: { type: 'ephemeral' } }] },
  ]);
  expect(reply.run?.usage).toEqual({
    provider: 'anthropic', model: 'claude-test', input_tokens: 130, output_tokens: 32, cache_read_tokens: 1500, cache_write_tokens: 1500, steps: 2,
    tool_calls: [{ name: 'lookup', ms: expect.any(Number), bytes: 81 /* 'found disk' inside its fence: <untrusted-data-TOKEN>…</untrusted-data-TOKEN>, an 18-digit token */, ok: true }],
  });
  expect(reply.run?.transcript.steps[0]?.tool_calls[0]).toMatchObject({ name: 'lookup', input: { q: 'disk' }, result: expect.stringMatching(/^<untrusted-data-([0-9a-f]+)>found disk<\/untrusted-data-\1>$/), ok: true });
  expect(reply.run?.transcript.reply).toBe('Disk is full on db-1.');
});

test('529 overloaded_error and 429 with retry-after are retried in place, then answered', async () => {
  api.script = [
    [529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
    [429, { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' } }, { 'retry-after': '0' }],
    [200, message([{ type: 'text', text: 'ok' }], 'end_turn')],
  ];
  expect((await run()).text).toBe('ok');
  expect(api.server.requests).toHaveLength(3);
});

test('429 that persists is a retryable provider_rate_limited; a retry-after too long is left to the queue at once', async () => {
  const limited: ScriptedAnswer = [429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, { 'retry-after': '0' }];
  api.script = [limited, limited, limited];
  await expect(run()).rejects.toMatchObject({ code: 'provider_rate_limited', retryable: true, message: expect.stringContaining('rate_limit_error: slow down') });
  expect(api.server.requests).toHaveLength(3);
  api.server.requests.length = 0;
  api.script = [[429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, { 'retry-after': '3600' }]];
  // The wait asked for travels with the error: the queue paces the retry by it (as for OpenAI).
  await expect(run()).rejects.toMatchObject({ code: 'provider_rate_limited', retryable: true, retryAfterMs: 3_600_000 });
  expect(api.server.requests).toHaveLength(1);
  api.server.requests.length = 0;
  api.script = [[529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { 'retry-after': '60' }]];
  await expect(run()).rejects.toMatchObject({ code: 'provider_unavailable', retryable: true, retryAfterMs: 60_000 });
  api.script = [[529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }], [529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }], [529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]];
  await expect(run()).rejects.toMatchObject({ code: 'provider_unavailable', retryable: true, message: expect.stringContaining('overloaded_error') });
});

test.each([
  [401, 'authentication_error', 'invalid x-api-key', 'provider_auth'],
  [403, 'permission_error', 'key sk-ant-test may not use this model', 'provider_auth'],
  [400, 'invalid_request_error', 'max_tokens: field required', 'provider_request'],
  [404, 'not_found_error', 'model: claude-nope', 'provider_model'],
])('HTTP %p %s is permanent (%s)', async (status, type, text, code) => {
  api.script = [[status, { type: 'error', error: { type, message: text } }]];
  // The API key, when echoed back, is masked in our error.
  await expect(run()).rejects.toMatchObject({ code, retryable: false, message: expect.stringContaining(text.replace('sk-ant-test', '••••••')) });
  await expect((api.script = [[status, { type: 'error', error: { type, message: text } }]], run())).rejects.toMatchObject({ message: expect.not.stringContaining('sk-ant-test') });
});

test('stop_reason max_tokens is retried once asking for a shorter answer; twice is agent_reply_truncated', async () => {
  api.script = [
    [200, message([{ type: 'text', text: 'A very long answ' }], 'max_tokens')],
    [200, message([{ type: 'text', text: 'Short answer.' }], 'end_turn')],
  ];
  const reply = await run({ maxTokens: 50 });
  expect(reply.text).toBe('Short answer.');
  expect(reply.run?.transcript.retried_shorter).toBe(true);
  const retry = JSON.parse(api.server.requests[1]!.body) as Body;
  expect(retry.tools?.map((t) => t.name)).toEqual(['lookup']);
  expect(retry.messages.at(-2)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'A very long answ' }] });
  expect(retry.messages.at(-1)?.content[0]).toMatchObject({ type: 'text', text: SHORTER_PLEASE });

  api.script = [[200, message([{ type: 'text', text: 'long' }], 'max_tokens')], [200, message([{ type: 'text', text: 'still long' }], 'max_tokens')]];
  const error = await run({ maxTokens: 50 }).catch((e: unknown) => e);
  expect(error).toMatchObject({ code: 'agent_reply_truncated', retryable: false, message: expect.stringContaining("(50: the subscription's --max-tokens, else agent.max_tokens)") });
});

test('stop_reason refusal is agent_reply_filtered; an empty end_turn is agent_reply_empty', async () => {
  api.script = [[200, message([], 'refusal')]];
  await expect(run()).rejects.toMatchObject({ code: 'agent_reply_filtered', retryable: false });
  api.script = [[200, message([{ type: 'text', text: '  \n' }], 'end_turn')]];
  await expect(run()).rejects.toMatchObject({ code: 'agent_reply_empty', retryable: false });
});

test('a retry-after wait that outlasts the run\'s time left is the queue\'s at once (carrying the wait), without another call', async () => {
  api.script = [[529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { 'retry-after': '10' }]];
  const started = Date.now();
  await expect(run({ timeoutMs: 2000 })).rejects.toMatchObject({ code: 'provider_unavailable', retryable: true, retryAfterMs: 10_000 });
  // Not waited until agent.timeout: thrown as soon as the answer said 10 s.
  expect(Date.now() - started).toBeLessThan(2000);
  expect(api.server.requests).toHaveLength(1);
});
