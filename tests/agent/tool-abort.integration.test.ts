/**
 * `agent.timeout` ends a code-host tool's HTTP work, not only the loop's wait for it: the
 * run's signal reaches the GitHub (octokit) and GitLab clients, so the request's socket is
 * closed and a rate-limit wait ends when the run's time runs out, with no retry after.
 * Local servers speak the real wire formats: a code host that never answers, GitHub's 403
 * "secondary rate limit" with Retry-After, GitLab's 429 with Retry-After, and OpenAI's
 * Chat Completions for the model.
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { AgentRequest } from '../../functions/core/agent/agent';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { BUILTIN_TOOLS, type Tool, type ToolContext } from '../../functions/core/agent/tools';
import { TOOL_REQUEST_TIMEOUT_MS } from '../../functions/core/agent/tools/codehost';
import type { Config } from '../../functions/core/config/types';
import { sendJson, startLocalServer, type LocalServer, type Recorded } from '../support/local-http';

/** How the fake code host answers a tool's request. */
type Behaviour = 'silent' | 'github_secondary_limit' | 'gitlab_429';

let llm: LocalServer;
let host: LocalServer;
let behaviour: Behaviour = 'silent';
/** When the code host saw each tool request's connection close before it answered. */
let closed: Array<{ url: string; at: number }> = [];
let onClose: (() => void) | undefined;

beforeAll(async () => {
  llm = await startLocalServer((_req, res) => {
    // The model asks for the change, once; it never gets to answer (the run times out first).
    sendJson(res, 200, { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_change', arguments: '{}' } }] } }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  });
  host = await startLocalServer((req: Recorded, res: ServerResponse) => {
    if (behaviour === 'silent') {
      res.on('close', () => {
        if (!res.writableEnded) closed.push({ url: req.url, at: Date.now() });
        onClose?.();
      });
      return;
    }
    if (behaviour === 'github_secondary_limit') {
      // GitHub's REST docs: a secondary rate limit is a 403 (or 429) with this message; retry-after says how long.
      sendJson(res, 403, { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' }, { 'retry-after': '60', 'x-ratelimit-remaining': '4000' });
      return;
    }
    // GitLab: 429 with Retry-After and its RateLimit-* headers, body as its Rack::Attack answers.
    res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '60', 'ratelimit-remaining': '0', 'ratelimit-reset': String(Math.floor(Date.now() / 1000) + 60) });
    res.end('Retry later\n');
  });
});
afterAll(async () => {
  await Promise.all([llm.close(), host.close()]);
});
beforeEach(() => {
  llm.requests.length = 0;
  host.requests.length = 0;
  closed = [];
  onClose = undefined;
});

const delivery = (): Config['delivery'] => ({ timeout_ms: 1000, codehost: { github: { token: 'gh-T', api_url: host.url }, gitlab: { token: 'gl-T', api_url: `${host.url}/api/v4` } } });
const githubEvent: Partial<AgentRequest> = {
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' },
  payload: { action: 'opened', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: 'a'.repeat(40) } } },
};
const gitlabEvent = (): Partial<AgentRequest> => ({
  message: { v: 1, event_id: 'evt_2', subscription: 's', source: 'gitlab', event: 'merge_request', delivery_id: 'd', received_at: '' },
  payload: JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, unknown>,
});
const request = (event: Partial<AgentRequest>): AgentRequest => ({
  system: 'S', prompt: 'P', rendered: 'P', allowedTools: ['get_change'], timeoutMs: 600, maxSteps: 4,
  message: event.message!, payload: event.payload!,
});

/** `get_change` itself, watched: when its own work (requests, waits) is over, whatever the loop did. */
function watched(): { tool: Tool; settled: Promise<number> } {
  let settle!: (at: number) => void;
  const settled = new Promise<number>((resolve) => {
    settle = resolve;
  });
  const inner = BUILTIN_TOOLS.get_change!;
  const tool: Tool = { ...inner, run: (input: unknown, context: ToolContext) => inner.run(input, context).finally(() => settle(Date.now())) };
  return { tool, settled };
}

/** `promise`, or a failure saying what did not happen within `ms` (a bound, not a sleep). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} (still not ${ms} ms after the run ended)`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function connectionClosed(): Promise<number> {
  return new Promise<number>((resolve) => {
    if (closed.length > 0) return resolve(closed[0]!.at);
    onClose = () => closed.length > 0 && resolve(closed[0]!.at);
  });
}

const openai = () => openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm', apiKey: 'sk-test' });

describe.each([
  ['GitHub', () => githubEvent, '/repos/octo/widgets/pulls/7'],
  ['GitLab', gitlabEvent, '/api/v4/projects/1/merge_requests/1'],
])('%s: a tool cut off by agent.timeout', (_name, event, path) => {
  test('closes the request\'s connection at once (not at the client\'s own 30 s limit)', async () => {
    behaviour = 'silent';
    const { tool, settled } = watched();
    const run = runToolLoop(request(event()), { provider: openai(), tools: { get_change: tool }, delivery: delivery() });
    await expect(run).rejects.toMatchObject({ code: 'agent_timeout', retryable: true });
    const ended = Date.now();
    expect(host.requests.map((r) => r.url.split('?')[0])).toEqual([path]);
    const closedAt = await within(connectionClosed(), 5000, `the fake code host's connection for ${path} was not closed`);
    expect(closedAt - ended).toBeLessThan(TOOL_REQUEST_TIMEOUT_MS / 10);
    await within(settled, 5000, 'the tool was still working');
    // Nothing asked again after the run ended.
    expect(host.requests).toHaveLength(1);
  });

  test('ends a rate-limit wait (Retry-After: 60, within the tools\' 90 s) with no retry afterwards', async () => {
    behaviour = _name === 'GitHub' ? 'github_secondary_limit' : 'gitlab_429';
    const { tool, settled } = watched();
    const run = runToolLoop(request(event()), { provider: openai(), tools: { get_change: tool }, delivery: delivery() });
    await expect(run).rejects.toMatchObject({ code: 'agent_timeout', retryable: true });
    const seen = host.requests.length;
    expect(seen).toBeGreaterThanOrEqual(1);
    await within(settled, 5000, 'the tool was still waiting out the rate limit');
    // Once the tool's work is over nothing more can be sent: no retry came after the run ended.
    expect(host.requests).toHaveLength(seen);
  });
});

test('a tool given an already-aborted signal sends nothing', async () => {
  behaviour = 'silent';
  const controller = new AbortController();
  controller.abort(new Error('run over'));
  const context: ToolContext = { message: githubEvent.message!, payload: githubEvent.payload!, delivery: delivery(), signal: controller.signal };
  const github = BUILTIN_TOOLS.get_change!.run({}, context);
  await expect(within(github, 5000, 'the GitHub tool did not give up')).rejects.toMatchObject({ code: 'tool_cancelled', retryable: true });
  const gl = gitlabEvent();
  const gitlab = BUILTIN_TOOLS.get_change!.run({}, { ...context, message: gl.message!, payload: gl.payload! });
  await expect(within(gitlab, 5000, 'the GitLab tool did not give up')).rejects.toMatchObject({ code: 'tool_cancelled', retryable: true });
  expect(host.requests).toHaveLength(0);
});
