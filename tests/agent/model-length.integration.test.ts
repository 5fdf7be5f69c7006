/**
 * An OpenAI-compatible server that ends a reply with `finish_reason: "model_length"`
 * (Mistral's Chat Completions API: the reply was cut because the model's context window
 * was full, the counterpart of Anthropic's and Bedrock's `model_context_window_exceeded`)
 * is a reply cut at the token limit: asked again once, shorter. Before, the loop read the
 * reason as `other` and posted the cut text as if it were complete.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let llm: LocalServer;
let script: unknown[] = [];
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift()));
});
afterAll(async () => llm.close());

const answer = (content: string, finish_reason: string) => ({
  id: 'cmpl-1', object: 'chat.completion', model: 'mistral-small-latest', created: 1763900000,
  choices: [{ index: 0, message: { role: 'assistant', content, tool_calls: null }, finish_reason }],
  usage: { prompt_tokens: 31990, completion_tokens: 10, total_tokens: 32000 },
});
const request: AgentRequest = {
  system: 'S', prompt: 'P', rendered: 'P', allowedTools: [], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {},
};

test('a reply cut with finish_reason "model_length" is not returned as a complete answer', async () => {
  script = [answer('The migration drops the users', 'model_length'), answer('The migration drops the users table.', 'stop')];
  const reply = await runToolLoop(request, { provider: openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'mistral-small-latest' }), tools: {}, delivery: { timeout_ms: 1000, codehost: {} } });
  // Asked again once, shorter, and that complete answer is the reply.
  expect(reply.text).toBe('The migration drops the users table.');
  expect(llm.requests).toHaveLength(2);
  const retry = JSON.parse(llm.requests[1]!.body) as { messages: Array<{ role: string; content: string }> };
  expect(retry.messages.at(-2)).toMatchObject({ role: 'assistant', content: 'The migration drops the users' });
  expect(retry.messages.at(-1)?.content).toContain('much shorter');
});
