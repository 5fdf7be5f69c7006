/**
 * An OpenAI-compatible model that sends tool arguments which are not JSON (cut, or a
 * small local model's slip): the tool must not run on a made-up input (a get_change_diff
 * asked for one file would return the whole diff, a record_finding would blame "path"),
 * and the model must be told its arguments were not valid JSON, so it can call again.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import type { Tool } from '../../functions/core/agent/tools';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let llm: LocalServer;
let script: unknown[] = [];
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift()));
});
afterAll(async () => llm.close());

const inputs: unknown[] = [];
const lookup: Tool = { name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: { q: { type: 'string' } } }, run: async (input) => (inputs.push(input), 'found') };
const call = (args: string) => ({ choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: args } }] } }], usage: { prompt_tokens: 10, completion_tokens: 5 } });
const answer = (content: string) => ({ choices: [{ finish_reason: 'stop', message: { role: 'assistant', content } }], usage: { prompt_tokens: 10, completion_tokens: 5 } });
const request: AgentRequest = {
  system: 'S', prompt: 'P', rendered: 'P', allowedTools: ['lookup'], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {},
};

test('arguments that are not JSON: the tool does not run and the model is told why', async () => {
  script = [call('{"q": "disk'), call('{"q": "disk"}'), answer('Done.')];
  const reply = await runToolLoop(request, { provider: openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm' }), tools: { lookup }, delivery: { timeout_ms: 1000, codehost: {} } });
  expect(reply.text).toBe('Done.');
  expect(inputs).toEqual([{ q: 'disk' }]);
  const second = JSON.parse(llm.requests[1]!.body) as { messages: Array<{ role: string; content: string }> };
  const toolMessage = second.messages.find((m) => m.role === 'tool')!;
  expect(toolMessage.content).toMatch(/^ERROR: .*not valid JSON/);
  expect(reply.run!.usage.tool_calls).toEqual([expect.objectContaining({ name: 'lookup', ok: false }), expect.objectContaining({ name: 'lookup', ok: true })]);
});
