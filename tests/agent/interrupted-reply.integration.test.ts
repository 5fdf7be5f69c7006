/**
 * Hunt 9 (agent2 D4): an OpenAI-compatible server that stops a reply part-way for its own
 * reasons says so in `finish_reason`: DeepSeek's `insufficient_system_resource` ("the request
 * is interrupted due to insufficient resource of the inference system"), vLLM's `abort`. The
 * text so far is a fragment: never posted (README: "a half-written choice is never posted"),
 * but a retryable provider failure, and the call was billed, so its tokens are counted. Before,
 * the loop read such a reason as `other` and posted the fragment as the reply. Local server
 * speaking DeepSeek's Chat Completions format.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { runOf } from '../../functions/core/agent/run-record';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let llm: LocalServer;
let script: unknown[] = [];
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift()));
});
afterAll(async () => llm.close());

const request: AgentRequest = {
  system: 'S', prompt: 'P', rendered: 'P', allowedTools: [], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {},
};
const completion = (finish_reason: string) => ({
  id: 'c1', object: 'chat.completion', model: 'deepseek-chat', created: 1763900000,
  choices: [{ index: 0, message: { role: 'assistant', content: 'The alert fires because the disk on db-1 is' }, logprobs: null, finish_reason }],
  usage: { prompt_tokens: 900, completion_tokens: 11, total_tokens: 911, prompt_tokens_details: { cached_tokens: 0 }, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 900 },
});

test.each(['insufficient_system_resource', 'abort'])('a reply the server interrupted (finish_reason %p) is a retryable failure with its tokens, never the answer', async (reason) => {
  script = [completion(reason)];
  const error = await runToolLoop(request, { provider: openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'deepseek-chat' }), tools: {}, delivery: { timeout_ms: 1000, codehost: {} } })
    .then((reply) => ({ posted: reply.text }), (e: unknown) => e);
  expect(error).toMatchObject({ code: 'provider_response', retryable: true, message: expect.stringContaining(`finish_reason "${reason}"`) });
  // Billed: the run's usage counts the call.
  expect(runOf(error)?.usage).toMatchObject({ input_tokens: 900, output_tokens: 11, steps: 1 });
});
