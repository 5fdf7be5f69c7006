/**
 * A provider's `retry-after` is waited out in place only when the wait fits in the time
 * the run has left (`agent.timeout`); otherwise the turn fails at once as a retryable rate
 * limit carrying the wait (`retryAfterMs`), which the queue's paced retry honours, instead
 * of ending as `agent_timeout` with the wait lost. Local servers speak the Anthropic
 * Messages and OpenAI Chat Completions wire formats (429 / 529, `retry-after`, error bodies).
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { anthropicProvider } from '../../functions/core/agent/anthropic';
import type { ChatProvider } from '../../functions/core/agent/conversation';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { runOf } from '../../functions/core/agent/run-record';
import { useScriptedServer, type ScriptedAnswer } from '../support/local-http';


const api = useScriptedServer([500, { type: 'error', error: { type: 'api_error', message: 'no script' } }]);

const request = (timeoutMs: number): AgentRequest => ({
  system: 'S', prompt: 'P', rendered: 'P', allowedTools: [], timeoutMs, maxSteps: 2,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {},
});
const run = (provider: ChatProvider, timeoutMs: number) => runToolLoop(request(timeoutMs), { provider, tools: {}, delivery: { timeout_ms: 1000, codehost: {} } });
const anthropic = () => anthropicProvider({ baseUrl: api.server.url, apiKey: 'sk-ant-test', model: 'claude-test', backoffMs: 5 });
const openai = () => openAiProvider({ baseUrl: `${api.server.url}/v1`, apiKey: 'sk-test', model: 'gpt-test' });

const anthropic429 = (retryAfter: string): ScriptedAnswer => [429, { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' } }, { 'retry-after': retryAfter, 'anthropic-ratelimit-input-tokens-remaining': '0' }];
const anthropicOk: ScriptedAnswer = [200, { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } }];

describe('Anthropic', () => {
  test('429 retry-after 5 s (under the 20 s in-place limit) with 1 s left: provider_rate_limited carrying 5 s, at once', async () => {
    api.script = [anthropic429('5'), anthropicOk];
    const started = Date.now();
    const error = await run(anthropic(), 1000).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'provider_rate_limited', retryable: true, retryAfterMs: 5000, message: expect.stringContaining('rate_limit_error') });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(api.server.requests).toHaveLength(1);
    // The run's record travels with it (one step, no tokens billed for a refused call).
    expect(runOf(error)?.usage).toMatchObject({ provider: 'anthropic', input_tokens: 0, output_tokens: 0 });
  });

  test('a retry-after that fits the time left is still waited out in place, then answered', async () => {
    api.script = [anthropic429('1'), anthropicOk];
    const started = Date.now();
    expect((await run(anthropic(), 10_000)).text).toBe('ok');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(api.server.requests).toHaveLength(2);
  });

  test('529 without retry-after whose backoff does not fit the time left: provider_unavailable at once, no wait carried', async () => {
    api.script = [[529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }], anthropicOk];
    const slow = anthropicProvider({ baseUrl: api.server.url, apiKey: 'sk-ant-test', model: 'claude-test', backoffMs: 5000 });
    const started = Date.now();
    const error = await run(slow, 1000).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'provider_unavailable', retryable: true });
    expect((error as { retryAfterMs?: number }).retryAfterMs).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(api.server.requests).toHaveLength(1);
  });

  test.each(['', 'soon', '-3'])('a retry-after of %p (not a wait) falls back to the backoff', async (value) => {
    api.script = [[429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, value ? { 'retry-after': value } : {}], anthropicOk];
    expect((await run(anthropic(), 5000)).text).toBe('ok');
    expect(api.server.requests).toHaveLength(2);
  });
});

describe('OpenAI (no in-place wait: checked, not the same defect)', () => {
  test('429 retry-after 5 s with 1 s left: provider_rate_limited carrying 5 s, at once, one call', async () => {
    api.script = [[429, { error: { message: 'Rate limit reached for gpt-test on tokens per min (TPM): Limit 30000, Used 30000, Requested 500. Please try again in 5s.', type: 'tokens', param: null, code: 'rate_limit_exceeded' } }, { 'retry-after': '5', 'x-ratelimit-remaining-tokens': '0' }]];
    const started = Date.now();
    await expect(run(openai(), 1000)).rejects.toMatchObject({ code: 'provider_rate_limited', retryable: true, retryAfterMs: 5000 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(api.server.requests).toHaveLength(1);
  });
});
