/**
 * http_get masks the credential headers it sent before it cuts the text it returns (a non-2xx
 * body to its first 2,000 characters, any body to `max_bytes`), and masks a tail the cut left
 * that begins one: no part of a token the cut splits reaches the model provider or the
 * transcript. Against a local target and a local OpenAI-compatible model.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { httpGetTool } from '../../functions/core/agent/http-get';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const TOKEN = 'prom_9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc';
/** The first 30 characters of the token: what must not reach the provider or transcript either. */
const TOKEN_HEAD = TOKEN.slice(0, 30);

let target: LocalServer;
let llm: LocalServer;
let script: unknown[] = [];
beforeAll(async () => {
  target = await startLocalServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const auth = String(req.headers.authorization ?? '');
    if (url.pathname === '/api/v1/expired') {
      // An error page quoting the credential it was sent, after some text: the token straddles character 2,000.
      const lead = 'x'.repeat(2000 - 'token '.length - auth.length + (TOKEN.length - 30));
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end(`${lead}token ${auth} is expired`);
    } else {
      // A debug endpoint listing request headers; the token straddles max_bytes (4096).
      const lead = 'y'.repeat(4096 - 'authorization: '.length - auth.length + (TOKEN.length - 30));
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`${lead}authorization: ${auth}\naccept: */*\n`);
    }
  });
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift() ?? { error: { message: 'no script' } }));
});
afterAll(async () => Promise.all([target.close(), llm.close()]));

const completion = (message: Record<string, unknown>, finish: string) => ({
  id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
});

async function runWith(path: string) {
  llm.requests.length = 0;
  script = [
    completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'http_get', arguments: JSON.stringify({ url: `${target.url}${path}` }) } }] }, 'tool_calls'),
    completion({ content: 'The token looks expired.' }, 'stop'),
  ];
  const http_get = httpGetTool({ allow: [{ prefix: `${target.url}/api/v1/`, headers: { Authorization: `Bearer ${TOKEN}` } }], timeout_ms: 2000, max_bytes: 4096 });
  const request: AgentRequest = {
    system: 'You triage alerts.', prompt: 'Check the alert', rendered: 'Check the alert', allowedTools: ['http_get'], timeoutMs: 5000, maxSteps: 4,
    message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' }, payload: {},
  };
  const reply = await runToolLoop(request, { provider: openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm' }), tools: { http_get }, delivery: { timeout_ms: 1000, codehost: {} } });
  // What the provider received in the second round: the tool result.
  const sent = llm.requests[1]!.body;
  const transcript = JSON.stringify(reply.run?.transcript);
  return { sent, transcript };
}

test.each([
  ['an error page (non-2xx: its body cut at 2,000 characters)', '/api/v1/expired'],
  ['a debug endpoint listing headers (body cut at max_bytes)', '/api/v1/headers'],
])('%s: no part of the token reaches the provider or the transcript', async (_name, path) => {
  const { sent, transcript } = await runWith(path);
  // The tool result did reach the provider (the test is not vacuous).
  expect(sent).toContain(path.endsWith('expired') ? 'xxxxxxxx' : 'yyyyyyyy');
  expect(sent).not.toContain(TOKEN_HEAD);
  expect(transcript).not.toContain(TOKEN_HEAD);
});
