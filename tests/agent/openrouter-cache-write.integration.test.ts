/**
 * Hunt 9 (agent2 D5): OpenRouter (an `openai` base_url) reports prompt-cache writes in Chat
 * Completions usage as `prompt_tokens_details.cache_write_tokens`, counted inside
 * `prompt_tokens` like the cache reads in `cached_tokens` (openrouter.ai/docs/use-cases/usage-accounting:
 * prompt_tokens 194 with cached_tokens 0 and cache_write_tokens 100). They are recorded as
 * cache writes; input_tokens are the uncached ones, and the three add up to prompt_tokens.
 * Before, every cache write was recorded as plain input. Local server speaking OpenRouter's format.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let llm: LocalServer;
let usage: Record<string, unknown> = {};
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => sendJson(res, 200, {
    id: 'gen-1', object: 'chat.completion', model: 'anthropic/claude-haiku-4.5', provider: 'Anthropic', created: 1763900000,
    choices: [{ index: 0, finish_reason: 'stop', native_finish_reason: 'end_turn', message: { role: 'assistant', content: 'Disk on db-1 is full.' } }],
    usage,
  }));
});
afterAll(async () => llm.close());

const request: AgentRequest = {
  system: 'S', prompt: 'P', rendered: 'P', allowedTools: [], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {},
};
const run = () => runToolLoop(request, { provider: openAiProvider({ baseUrl: `${llm.url}/api/v1`, model: 'anthropic/claude-haiku-4.5' }), tools: {}, delivery: { timeout_ms: 1000, codehost: {} } });

test("OpenRouter's cache writes are recorded as cache writes, not as uncached input", async () => {
  usage = { prompt_tokens: 2400, completion_tokens: 60, total_tokens: 2460, cost: 0.0031, prompt_tokens_details: { cached_tokens: 1200, cache_write_tokens: 1100, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } };
  expect((await run()).run?.usage).toMatchObject({ input_tokens: 100, output_tokens: 60, cache_read_tokens: 1200, cache_write_tokens: 1100 });
});

test('a write with no cache read (the first call of a run), as in OpenRouter\'s example', async () => {
  usage = { prompt_tokens: 194, completion_tokens: 2, total_tokens: 196, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 100, audio_tokens: 0 } };
  const recorded = (await run()).run?.usage;
  expect(recorded).toMatchObject({ input_tokens: 94, output_tokens: 2, cache_write_tokens: 100 });
  expect(recorded?.cache_read_tokens).toBeUndefined();
});
