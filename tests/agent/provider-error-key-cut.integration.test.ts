/**
 * A provider (or a proxy in front of it) that answers an error with a non-JSON page quoting
 * the API key: the error message keeps the page's first 300 characters, and the key is masked
 * before that cut. Before, the page was cut first and masked after, so a key split by the cut
 * no longer matched whole and its first part reached the event record and the log.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { anthropicProvider } from '../../functions/core/agent/anthropic';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import type { ChatProvider } from '../../functions/core/agent/conversation';
import { startLocalServer, type LocalServer } from '../support/local-http';

const KEY = 'sk-proj-9f8e7d6c5b4a39281706f5e4d3c2b1a0';
let page = '';
let llm: LocalServer;
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => {
    res.writeHead(502, { 'content-type': 'text/html' });
    res.end(page);
  });
});
afterAll(async () => llm.close());

const request: AgentRequest = {
  system: 'S', prompt: 'P', rendered: 'P', allowedTools: [], timeoutMs: 5000, maxSteps: 2,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {},
};
const failureOf = async (provider: ChatProvider) => {
  const error = await runToolLoop(request, { provider, tools: {}, delivery: { timeout_ms: 1000, codehost: {} } }).catch((e: unknown) => e);
  return (error as Error).message;
};

test.each([
  ['openai', () => openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm', apiKey: KEY })],
  ['anthropic', () => anthropicProvider({ baseUrl: llm.url, apiKey: KEY, model: 'claude-test', backoffMs: 1, retries: 0 })],
])('%s: a key split by the 300-character cut of an error page is masked', async (_name, provider) => {
  // "Bearer " + the key starts at character 280: the cut at 300 splits it.
  const before = 'x'.repeat(280 - 'Authorization: Bearer '.length);
  page = `${before}Authorization: Bearer ${KEY} was refused by the gateway`;
  const message = await failureOf(provider());
  expect(message).toContain('Authorization: Bearer');
  expect(message).not.toContain(KEY.slice(0, 12));
});

test('a whole key inside the first 300 characters is masked as before', async () => {
  page = `<html>token ${KEY} expired</html>`;
  const message = await failureOf(openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm', apiKey: KEY }));
  expect(message).toContain('token ••••••');
  expect(message).not.toContain(KEY.slice(0, 12));
});
