/**
 * Hunt 6 (honest replies, visible cost), against local servers speaking the real wire
 * formats: an http_get target that echoes the configured credential (it must reach neither
 * the model provider nor the transcript), a code host that never answers (agent.timeout
 * must still end the run), OpenAI's 429 `insufficient_quota` (billing: permanent) and
 * 408/409 (retryable, as the official SDKs treat them), an OpenAI `refusal` (filtered, not
 * "empty"), and the tokens of a gateway's `finish_reason: "error"` choice.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { httpGetTool } from '../../functions/core/agent/http-get';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { runOf } from '../../functions/core/agent/run-record';
import { BUILTIN_TOOLS } from '../../functions/core/agent/tools';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const PROM_SECRET = 'prom-secret-7788-token';
let llm: LocalServer;
let prom: LocalServer;
let silentHost: LocalServer;
let script: Array<{ status?: number; body: unknown; headers?: Record<string, string> }> = [];
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => {
    const next = script.shift() ?? { status: 500, body: { error: { message: 'script empty' } } };
    sendJson(res, next.status ?? 200, next.body, next.headers ?? {});
  });
  // A debugging endpoint or an error page that quotes the request's headers.
  prom = await startLocalServer((req, res) => {
    if (req.url.includes('fail')) sendJson(res, 401, { error: `token ${String(req.headers.authorization)} is expired` });
    else sendJson(res, 200, { status: 'success', seen_headers: req.headers });
  });
  silentHost = await startLocalServer(() => undefined);
});
afterAll(async () => {
  await Promise.all([llm.close(), prom.close(), silentHost.close()]);
});
beforeEach(() => {
  llm.requests.length = 0;
  script = [];
});

const request = (extra: Partial<AgentRequest> = {}): AgentRequest => ({
  system: 'S', prompt: 'P', rendered: 'P', allowedTools: ['http_get'], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {}, ...extra,
});
const toolCall = (name: string, args: unknown) => ({ body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }], usage: { prompt_tokens: 10, completion_tokens: 5 } } });
const answer = (content: string) => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content } }], usage: { prompt_tokens: 10, completion_tokens: 5 } } });
const openai = () => openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm', apiKey: 'sk-test-key' });
const delivery = { timeout_ms: 1000, codehost: {} };
const httpGet = () => httpGetTool({ allow: [{ prefix: `${prom.url}/api/`, headers: { Authorization: `Bearer ${PROM_SECRET}` } }], timeout_ms: 2000, max_bytes: 65536 });

describe('http_get never hands a configured credential to the model or the transcript', () => {
  test('a target that echoes the Authorization header', async () => {
    script = [toolCall('http_get', { url: `${prom.url}/api/echo` }), answer('Done.')];
    const reply = await runToolLoop(request(), { provider: openai(), tools: { http_get: httpGet() }, delivery });
    expect(reply.text).toBe('Done.');
    expect(llm.requests[1]!.body).toContain('seen_headers');
    expect(llm.requests[1]!.body).not.toContain(PROM_SECRET);
    expect(JSON.stringify(reply.run)).not.toContain(PROM_SECRET);
  });

  test('an error page that quotes the credential', async () => {
    script = [toolCall('http_get', { url: `${prom.url}/api/fail` }), answer('Done.')];
    const reply = await runToolLoop(request(), { provider: openai(), tools: { http_get: httpGet() }, delivery });
    expect(llm.requests[1]!.body).toContain('is expired');
    expect(llm.requests[1]!.body).not.toContain(PROM_SECRET);
    expect(JSON.stringify(reply.run)).not.toContain(PROM_SECRET);
  });
});

test('agent.timeout ends the run while a code-host tool waits on a host that never answers', async () => {
  script = [toolCall('get_change_diff', {})];
  const started = Date.now();
  const run = runToolLoop(request({
    allowedTools: ['get_change_diff'], timeoutMs: 1000,
    message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' },
    payload: { action: 'opened', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: 'a'.repeat(40) } } },
  }), { provider: openai(), tools: BUILTIN_TOOLS, delivery: { timeout_ms: 1000, codehost: { github: { token: 'gh-T', api_url: silentHost.url } } } });
  await expect(run).rejects.toMatchObject({ code: 'agent_timeout', retryable: true });
  expect(Date.now() - started).toBeLessThan(4000);
  expect(runOf(await run.catch((e: unknown) => e))?.usage.tool_calls).toEqual([expect.objectContaining({ name: 'get_change_diff', ok: false })]);
}, 40_000);

describe('OpenAI errors are classified as the API means them', () => {
  test('429 insufficient_quota is billing, not a rate limit: permanent', async () => {
    script = [{ status: 429, body: { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } } }];
    await expect(runToolLoop(request(), { provider: openai(), tools: {}, delivery })).rejects.toMatchObject({ code: 'provider_request', retryable: false, message: expect.stringContaining('quota') });
  });

  test.each([408, 409])('%i is worth another attempt', async (status) => {
    script = [{ status, body: { error: { message: 'Request timed out / conflict', type: 'server_error' } } }];
    await expect(runToolLoop(request(), { provider: openai(), tools: {}, delivery })).rejects.toMatchObject({ code: 'provider_unavailable', retryable: true });
  });

  test('a refusal (message.refusal, content null) is a filtered reply, not an empty one', async () => {
    script = [{ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: null, refusal: "I'm sorry, I can't help with that." } }], usage: { prompt_tokens: 10, completion_tokens: 7 } } }];
    const error = await runToolLoop(request(), { provider: openai(), tools: {}, delivery }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'agent_reply_filtered', message: expect.stringContaining("can't help") });
    expect(runOf(error)?.usage).toMatchObject({ input_tokens: 10, output_tokens: 7 });
  });

  test('a finish_reason "error" choice: its tokens are still recorded', async () => {
    script = [{ body: { choices: [{ finish_reason: 'error', error: { code: 502, message: 'Upstream died' }, message: { role: 'assistant', content: 'half' } }], usage: { prompt_tokens: 300, completion_tokens: 40 } } }];
    const error = await runToolLoop(request(), { provider: openai(), tools: {}, delivery }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'provider_unavailable', retryable: true });
    expect(runOf(error)?.usage).toMatchObject({ input_tokens: 300, output_tokens: 40, steps: 1 });
  });
});
