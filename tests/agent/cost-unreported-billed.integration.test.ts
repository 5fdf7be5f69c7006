/**
 * Hunt 12 (cost D2): a model call that was answered but failed (vLLM's `finish_reason:
 * "abort"`, a gateway's `"error"` choice or 200 error body, Bedrock's malformed output) from
 * a server that reports no usage, or zeros, is not free: hookagent estimates its tokens as
 * for an answered call without usage (README "Providers that report no usage"), and it is
 * one step. Before, such a failure carried tokens only when the provider reported some: the
 * run said 0 steps and 0 tokens, and a server that kept aborting never tripped a budget.
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { AgentRequest } from '../../functions/core/agent/agent';
import { CHARS_PER_TOKEN } from '../../functions/core/agent/estimate';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { runOf } from '../../functions/core/agent/run-record';
import { bedrockProvider } from '../../functions/aws/bedrock-provider';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let llm: LocalServer;
let script: unknown[] = [];
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift()));
});
afterAll(async () => llm.close());

const SYSTEM = 'You review changes.';
const PROMPT = 'Review the change that adds x.';
const request: AgentRequest = {
  system: SYSTEM, prompt: PROMPT, rendered: PROMPT, allowedTools: [], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {},
};
const FRAGMENT = 'A partial review of the change that was';
/** The estimate of this one call: what was sent (no tools offered) and the text answered. */
const estimated = (answered: string) => ({
  input_tokens: Math.ceil((SYSTEM.length + PROMPT.length) / CHARS_PER_TOKEN), output_tokens: Math.ceil(answered.length / CHARS_PER_TOKEN), steps: 1, estimated: true,
});
const choice = (finish_reason: string, usage?: unknown) => ({
  id: 'c1', object: 'chat.completion', model: 'llama3',
  choices: [{ index: 0, message: { role: 'assistant', content: FRAGMENT }, finish_reason, ...(finish_reason === 'error' ? { error: { code: 502, message: 'upstream died' } } : {}) }],
  ...(usage ? { usage } : {}),
});
const chat = () => runToolLoop(request, { provider: openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'llama3' }), tools: {}, delivery: { timeout_ms: 1000, codehost: {} } })
  .then((reply) => ({ posted: reply.text }), (error: unknown) => error);

test.each([
  ['vLLM\'s finish_reason "abort", no usage', choice('abort'), 'provider_response', FRAGMENT],
  ['vLLM\'s finish_reason "abort", usage all zeros', choice('abort', { prompt_tokens: 0, completion_tokens: 0 }), 'provider_response', FRAGMENT],
  ['a gateway\'s choice with finish_reason "error", no usage', choice('error'), 'provider_unavailable', FRAGMENT],
  ['a gateway\'s 200 error body (the model had started), no usage', { error: { code: 502, message: 'upstream died' } }, 'provider_unavailable', ''],
])('%s: retryable, and the call counts one step with estimated tokens', async (_what, answer, code, answered) => {
  script = [answer];
  const error = await chat();
  expect(error).toMatchObject({ code, retryable: true });
  expect(runOf(error)?.usage).toMatchObject(estimated(answered));
});

test('a reported usage is still the provider\'s figure, not an estimate', async () => {
  script = [choice('abort', { prompt_tokens: 900, completion_tokens: 11 })];
  const usage = runOf(await chat())?.usage;
  expect(usage).toMatchObject({ input_tokens: 900, output_tokens: 11, steps: 1 });
  expect(usage?.estimated).toBeUndefined();
});

test('Bedrock: malformed model output without usage is estimated too (one step)', async () => {
  script = [{ output: { message: { role: 'assistant', content: [{ text: FRAGMENT }] } }, stopReason: 'malformed_model_output' }];
  const client = new BedrockRuntimeClient({ endpoint: llm.url, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
  const error = await runToolLoop(request, { provider: bedrockProvider(client, 'anthropic.claude-test'), tools: {}, delivery: { timeout_ms: 1000, codehost: {} } }).catch((e: unknown) => e);
  expect(error).toMatchObject({ code: 'provider_response', retryable: true });
  expect(runOf(error)?.usage).toMatchObject(estimated(FRAGMENT));
});
