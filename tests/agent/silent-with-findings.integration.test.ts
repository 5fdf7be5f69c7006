/**
 * [SILENT] and recorded findings: the findings travel as a hidden block in front of the
 * reply, which must not change what counts as silent. A model that recorded a finding and
 * then answered "[SILENT] trivial change" has a reply that, trimmed, begins with [SILENT]
 * (README "[SILENT]"); it must not be posted as a comment reading "[SILENT] trivial change".
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { isSilent } from '../../functions/core/agent/silent';
import { BUILTIN_TOOLS } from '../../functions/core/agent/tools';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let llm: LocalServer;
let script: unknown[] = [];
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift()));
});
afterAll(async () => llm.close());

const finding = { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'record_finding', arguments: JSON.stringify({ path: 'a.ts', line: 1, side: 'RIGHT', severity: 'nit', body: 'Typo.' }) } }] } }] };
const answer = (content: string) => ({ choices: [{ finish_reason: 'stop', message: { role: 'assistant', content } }] });
const request: AgentRequest = {
  system: 'S', prompt: 'Review', rendered: 'Review', allowedTools: ['record_finding'], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' },
  payload: {},
};
const run = async (text: string) => {
  script = [finding, answer(text)];
  return (await runToolLoop(request, { provider: openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm' }), tools: BUILTIN_TOOLS, delivery: { timeout_ms: 1000, codehost: {} } })).text;
};

test.each(['[SILENT] trivial change', '[silent]', '[SILENT]\nNothing to add.'])('%j after a recorded finding is silent', async (text) => {
  const reply = await run(text);
  expect(reply.startsWith('<!-- hookagent-findings:')).toBe(true);
  expect(isSilent(reply)).toBe(true);
});

test('an ordinary answer after a recorded finding is not silent', async () => {
  expect(isSilent(await run('Verdict: fine, one nit.'))).toBe(false);
});
