/**
 * Anthropic returns whitespace-only text blocks next to tool_use blocks (the SDKs' own
 * issue: "returns empty text blocks, but does not accept them"), and its Messages API
 * refuses them in a request: 400 `messages: text content blocks must contain
 * non-whitespace text`. The local server below checks that rule as the real API does;
 * the conversation sent back must never hold such a block.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { anthropicProvider } from '../../functions/core/agent/anthropic';
import { runToolLoop } from '../../functions/core/agent/loop';
import type { Tool } from '../../functions/core/agent/tools';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let server: LocalServer;
let script: unknown[] = [];
beforeAll(async () => {
  server = await startLocalServer((req, res) => {
    const body = JSON.parse(req.body) as { messages: Array<{ content: Array<{ type: string; text?: string }> }> };
    const blank = body.messages.some((m) => m.content.some((b) => b.type === 'text' && (b.text ?? '').trim() === ''));
    if (blank) return sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'messages: text content blocks must contain non-whitespace text' } });
    return sendJson(res, 200, script.shift());
  });
});
afterAll(async () => server.close());

const lookup: Tool = { name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: {} }, run: async () => 'found it' };
const message = (content: unknown[], stop_reason: string) => ({ id: 'msg', type: 'message', role: 'assistant', model: 'm', content, stop_reason, usage: { input_tokens: 10, output_tokens: 5 } });
const request: AgentRequest = {
  system: 'S', prompt: 'P', rendered: 'P', allowedTools: ['lookup'], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {},
};
const run = () => runToolLoop(request, { provider: anthropicProvider({ baseUrl: server.url, apiKey: 'k', model: 'm' }), tools: { lookup }, delivery: { timeout_ms: 1000, codehost: {} } });

test('a whitespace-only text block beside a tool_use is not sent back (the API would refuse the next round)', async () => {
  script = [
    message([{ type: 'text', text: '\n\n' }, { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }], 'tool_use'),
    message([{ type: 'text', text: 'All good.' }], 'end_turn'),
  ];
  const reply = await run();
  expect(reply.text).toBe('All good.');
  const second = JSON.parse(server.requests[1]!.body) as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
  expect(second.messages[1]).toMatchObject({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1' }] });
});

test('a reply cut at the token limit that is only whitespace is not sent back as a blank block', async () => {
  server.requests.length = 0;
  script = [message([{ type: 'text', text: '  \n' }], 'max_tokens'), message([{ type: 'text', text: 'Short answer.' }], 'end_turn')];
  const reply = await run();
  expect(reply.text).toBe('Short answer.');
});
