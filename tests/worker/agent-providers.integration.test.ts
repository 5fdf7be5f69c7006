/**
 * The tool-use loop over local servers that speak the OpenAI Chat Completions and Bedrock
 * Converse wire formats, with a local GitHub API for the code-review tools.
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { AgentRequest } from '../../functions/core/agent/agent';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { BUILTIN_TOOLS, TOOL_OUTPUT_CAP } from '../../functions/core/agent/tools';
import { bedrockProvider } from '../../functions/aws/bedrock-provider';
import type { Config } from '../../functions/core/config/types';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

/** A tool result as the loop sends it: inside a fence of a random token (functions/core/agent/fence.ts). */
const fenced = (text: string) => expect.stringMatching(new RegExp(`^<untrusted-data-([0-9a-f]{18})>${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</untrusted-data-\\1>$`));

let github: LocalServer;
let diff = 'diff --git a/x.ts b/x.ts\n+const x = 1;\n';
beforeAll(async () => {
  github = await startLocalServer((req, res) => {
    if (req.headers.authorization !== 'token gh-token') {
      sendJson(res, 401, { message: 'Bad credentials' });
    } else if (req.url === '/repos/o/r/pulls/7') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(diff);
    } else if (req.url === '/repos/o/r/pulls/7/files?per_page=100') {
      sendJson(res, 200, [{ filename: 'x.ts', status: 'modified', additions: 1, deletions: 0 }]);
    } else {
      sendJson(res, 404, { message: 'Not Found' });
    }
  });
});
afterAll(async () => github.close());

const delivery = (): Config['delivery'] => ({ timeout_ms: 1000, codehost: { github: { token: 'gh-token', api_url: github.url } } });
const request = (overrides: Partial<AgentRequest> = {}): AgentRequest => ({
  system: 'SYSTEM', prompt: '<untrusted-event-data>\nReview PR 7\n</untrusted-event-data>', rendered: 'Review PR 7',
  allowedTools: ['get_change_diff', 'list_changed_files'], timeoutMs: 2000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '', payload: {} },
  payload: { pull_request: { number: 7 }, repository: { full_name: 'o/r' } }, ...overrides,
});

type ChatBody = { model: string; messages: Array<Record<string, unknown>>; tools?: Array<{ function: { name: string } }> };

describe('OpenAI-compatible Chat Completions', () => {
  let llm: LocalServer;
  let script: Array<(body: ChatBody) => [number, unknown]> = [];
  beforeAll(async () => {
    llm = await startLocalServer((req, res) => {
      const next = script.shift();
      if (!next) return; // never answers: the timeout case
      const [status, body] = next(JSON.parse(req.body) as ChatBody);
      sendJson(res, status, body);
    });
  });
  afterAll(async () => llm.close());
  beforeEach(() => {
    llm.requests.length = 0;
  });
  const provider = () => openAiProvider({ baseUrl: `${llm.url}/v1`, apiKey: 'sk-test', model: 'gpt-test' });
  const toolCall = (id: string, name: string, args = '{}') => ({ choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: args } }] } }] });
  const text = (content: string) => ({ choices: [{ message: { role: 'assistant', content } }] });

  test('tool calls run against the code host and their results go back to the model', async () => {
    script = [() => [200, toolCall('call_1', 'get_change_diff')], () => [200, toolCall('call_2', 'list_changed_files')], () => [200, text('Looks good: one constant added.')]];
    const reply = await runToolLoop(request(), { provider: provider(), tools: BUILTIN_TOOLS, delivery: delivery() });
    expect(reply).toMatchObject({ text: 'Looks good: one constant added.', steps: 3, refusedTools: [] });
    const first = JSON.parse(llm.requests[0]!.body) as ChatBody;
    expect(llm.requests[0]!.url).toBe('/v1/chat/completions');
    expect(llm.requests[0]!.headers.authorization).toBe('Bearer sk-test');
    expect(first.model).toBe('gpt-test');
    expect(first.messages[0]).toEqual({ role: 'system', content: 'SYSTEM' });
    expect(first.tools?.map((t) => t.function.name)).toEqual(['get_change_diff', 'list_changed_files']);
    const third = JSON.parse(llm.requests[2]!.body) as ChatBody;
    // Tool results go back inside the run's untrusted-data fence.
    expect(third.messages).toContainEqual({ role: 'tool', tool_call_id: 'call_1', content: fenced(diff) });
    expect(third.messages).toContainEqual({ role: 'tool', tool_call_id: 'call_2', content: fenced('modified x.ts (+1 -0)') });
    expect(github.requests.map((r) => r.headers.accept)).toContain('application/vnd.github.diff');
  });

  test('a call to a tool no attached skill declares is refused, and recorded', async () => {
    script = [() => [200, toolCall('call_1', 'get_change_diff')], () => [200, text('done')]];
    const reply = await runToolLoop(request({ allowedTools: [] }), { provider: provider(), tools: BUILTIN_TOOLS, delivery: delivery() });
    expect(reply.refusedTools).toEqual(['get_change_diff']);
    const second = JSON.parse(llm.requests[1]!.body) as ChatBody;
    expect(second.tools).toBeUndefined();
    expect(second.messages).toContainEqual({ role: 'tool', tool_call_id: 'call_1', content: "ERROR: Tool 'get_change_diff' is not available for this task." });
  });

  test('tool output is capped before it reaches the model; tool errors go back as errors', async () => {
    diff = 'x'.repeat(TOOL_OUTPUT_CAP * 2);
    script = [() => [200, toolCall('c', 'get_change_diff')], () => [200, text('ok')]];
    await runToolLoop(request(), { provider: provider(), tools: BUILTIN_TOOLS, delivery: delivery() });
    const sent = (JSON.parse(llm.requests[1]!.body) as ChatBody).messages.find((m) => m.role === 'tool')!.content as string;
    expect(sent.length).toBeLessThan(TOOL_OUTPUT_CAP + 150);
    diff = 'small';
    script = [() => [200, toolCall('c', 'get_change_diff')], () => [200, text('ok')]];
    await runToolLoop(request(), { provider: provider(), tools: BUILTIN_TOOLS, delivery: { timeout_ms: 1, codehost: { github: { token: 'wrong', api_url: github.url } } } });
    const error = (JSON.parse(llm.requests[3]!.body) as ChatBody).messages.find((m) => m.role === 'tool')!.content as string;
    // The error carries the code host's words: fenced like any tool output.
    expect(error.replace(/^ERROR: /, '')).toEqual(fenced('github answered 401: Bad credentials'));
    expect(error).toMatch(/^ERROR: /);
  });

  test.each([
    [401, { error: { message: 'Incorrect API key provided: sk-test', type: 'invalid_request_error' } }, 'provider_auth', false, 'Incorrect API key provided'],
    [404, { error: { message: 'The model `gpt-nope` does not exist' } }, 'provider_model', false, 'does not exist'],
    [429, { error: { message: 'Rate limit reached' } }, 'provider_rate_limited', true, 'Rate limit reached'],
    [500, { error: { message: 'The server had an error' } }, 'provider_unavailable', true, 'server had an error'],
  ])('HTTP %p is %p (retryable: %p)', async (status, body, code, retryable, text) => {
    script = [() => [status, body]];
    const failure = await runToolLoop(request(), { provider: provider(), tools: BUILTIN_TOOLS, delivery: delivery() }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code, retryable, message: expect.stringContaining(text) });
    // A provider that echoes the API key in its error does not put it in ours.
    expect((failure as Error).message).not.toContain('sk-test');
  });

  test('a model that never answers is agent_timeout (retryable)', async () => {
    script = [];
    await expect(runToolLoop(request({ timeoutMs: 200 }), { provider: provider(), tools: BUILTIN_TOOLS, delivery: delivery() }))
      .rejects.toMatchObject({ code: 'agent_timeout', retryable: true });
  });

  test('max_steps bounds the rounds', async () => {
    script = Array.from({ length: 5 }, () => () => [200, toolCall('c', 'list_changed_files')] as [number, unknown]);
    await expect(runToolLoop(request({ maxSteps: 2 }), { provider: provider(), tools: BUILTIN_TOOLS, delivery: delivery() }))
      .rejects.toMatchObject({ code: 'agent_max_steps', retryable: false });
    script = [];
  });
});

describe('Bedrock Converse', () => {
  let bedrock: LocalServer;
  let script: Array<[number, unknown, Record<string, string>?]> = [];
  beforeAll(async () => {
    bedrock = await startLocalServer((_req, res) => {
      const [status, body, headers] = script.shift() ?? [500, { message: 'no script' }];
      sendJson(res, status, body, headers);
    });
  });
  afterAll(async () => bedrock.close());

  // The client defaults to HTTP/2; the local server speaks HTTP/1.1, as Converse also accepts.
  const client = () => new BedrockRuntimeClient({
    endpoint: bedrock.url, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' }, maxAttempts: 1, requestHandler: new NodeHttpHandler(),
  });
  const model = 'anthropic.claude-3-5-haiku-20241022-v1:0';

  test('toolUse blocks run the tools; toolResult blocks go back; the final text is the reply', async () => {
    script = [
      [200, { output: { message: { role: 'assistant', content: [{ text: 'Let me look.' }, { toolUse: { toolUseId: 'tu1', name: 'list_changed_files', input: {} } }] } }, stopReason: 'tool_use' }],
      [200, { output: { message: { role: 'assistant', content: [{ text: 'One file changed.' }] } }, stopReason: 'end_turn' }],
    ];
    const reply = await runToolLoop(request(), { provider: bedrockProvider(client(), model), tools: BUILTIN_TOOLS, delivery: delivery() });
    expect(reply.text).toBe('One file changed.');
    expect(bedrock.requests[0]!.url).toBe(`/model/${encodeURIComponent(model)}/converse`);
    expect(bedrock.requests[0]!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
    const first = JSON.parse(bedrock.requests[0]!.body) as { system: unknown; toolConfig: { tools: Array<{ toolSpec: { name: string } }> } };
    expect(first.system).toEqual([{ text: 'SYSTEM' }]);
    expect(first.toolConfig.tools.map((t) => t.toolSpec.name)).toEqual(['get_change_diff', 'list_changed_files']);
    const second = JSON.parse(bedrock.requests[1]!.body) as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
    expect(second.messages[2]).toEqual({ role: 'user', content: [{ toolResult: { toolUseId: 'tu1', content: [{ text: fenced('modified x.ts (+1 -0)') }], status: 'success' } }] });
  });

  test('ThrottlingException is retryable; ValidationException and AccessDeniedException are permanent', async () => {
    const run = () => runToolLoop(request(), { provider: bedrockProvider(client(), model), tools: BUILTIN_TOOLS, delivery: delivery() });
    script = [[429, { message: 'Too many requests' }, { 'x-amzn-errortype': 'ThrottlingException' }]];
    await expect(run()).rejects.toMatchObject({ code: 'provider_unavailable', retryable: true });
    script = [[400, { message: 'The provided model identifier is invalid.' }, { 'x-amzn-errortype': 'ValidationException' }]];
    await expect(run()).rejects.toMatchObject({ code: 'provider_model', retryable: false, message: expect.stringContaining('model identifier is invalid') });
    script = [[403, { message: 'You don\'t have access to the model' }, { 'x-amzn-errortype': 'AccessDeniedException' }]];
    await expect(run()).rejects.toMatchObject({ code: 'provider_auth', retryable: false });
  });
});

describe('code-review tools on GitLab', () => {
  test('merge request diffs and files through /projects/:id/merge_requests/:iid/diffs with PRIVATE-TOKEN', async () => {
    const gitlab = await startLocalServer((req, res) => {
      if (req.headers['private-token'] !== 'gl-token') sendJson(res, 401, { message: '401 Unauthorized' });
      else if (req.url === '/api/v4/projects/1/merge_requests/1/diffs?per_page=100') sendJson(res, 200, [{ new_path: 'README.md', diff: '@@ -1 +1 @@\n-a\n+b\n', new_file: false, deleted_file: false, renamed_file: false }]);
      else sendJson(res, 404, { message: '404 Not Found' });
    });
    try {
      const { readFileSync } = await import('node:fs');
      const { join } = await import('node:path');
      const payload = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, unknown>;
      const context = {
        message: { ...request().message, source: 'gitlab' as const }, payload, signal: AbortSignal.timeout(2000),
        delivery: { timeout_ms: 1000, codehost: { gitlab: { token: 'gl-token', api_url: `${gitlab.url}/api/v4` } } },
      };
      expect(await BUILTIN_TOOLS.list_changed_files!.run({}, context)).toBe('modified README.md');
      expect(await BUILTIN_TOOLS.get_change_diff!.run({}, context)).toBe('--- README.md\n@@ -1 +1 @@\n-a\n+b\n');
      await expect(BUILTIN_TOOLS.get_change_diff!.run({}, { ...context, payload: { object_kind: 'push', project: { id: 1 } } })).rejects.toMatchObject({ code: 'tool_no_change' });
    } finally {
      await gitlab.close();
    }
  });
});
