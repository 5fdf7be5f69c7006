/**
 * OpenRouter (named in the README as an `openai` base_url) answers HTTP 200 with an error
 * body when the model fails after it started (its docs: "Otherwise, the returned HTTP
 * response status will be 200 and any error occurred while the LLM is producing the output
 * will be emitted in the response body"): `{"error": {"code": 502, "message": …}}`, or a
 * choice with `finish_reason: "error"`. These are the provider's failures, classified by
 * their code (502: retryable) with its message, not a permanent "answered without a
 * message", and never a half-written reply posted as if complete.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { HookError } from '../../functions/core/errors';

let llm: LocalServer;
let next: unknown;
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => sendJson(res, 200, next));
});
afterAll(async () => llm.close());

const request: AgentRequest = {
  system: 'S', prompt: 'P', rendered: 'P', allowedTools: [], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {},
};
const run = () => runToolLoop(request, { provider: openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm' }), tools: {}, delivery: { timeout_ms: 1000, codehost: {} } });

test('200 with {"error": {"code": 502}}: a retryable provider failure carrying its message', async () => {
  next = { error: { code: 502, message: 'Provider returned error', metadata: { provider_name: 'Upstream' } } };
  const error = await run().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(HookError);
  expect(error).toMatchObject({ code: 'provider_unavailable', retryable: true });
  expect((error as Error).message).toContain('Provider returned error');
});

test('200 with {"error": {"code": 400}}: permanent, with the message', async () => {
  next = { error: { code: 400, message: 'This model does not support tools' } };
  const error = await run().catch((e: unknown) => e);
  expect(error).toMatchObject({ code: 'provider_request', retryable: false });
  expect((error as Error).message).toContain('This model does not support tools');
});

test('a choice that ended with finish_reason "error" is not posted as a reply', async () => {
  next = { choices: [{ finish_reason: 'error', message: { role: 'assistant', content: 'The answer is half' }, error: { code: 502, message: 'Upstream disconnected' } }], usage: { prompt_tokens: 10, completion_tokens: 3 } };
  const error = await run().catch((e: unknown) => e);
  expect(error).toMatchObject({ code: 'provider_unavailable', retryable: true });
  expect((error as Error).message).toContain('Upstream disconnected');
});
