/**
 * Hunt 12 (cost D1): a model provider whose connection is cut part-way through the body of
 * its answer (a proxy or load balancer dropping it after `200` and the headers) is a
 * network error: `provider_unavailable`, retried by the queue (README "Provider errors").
 * Before, only the request was guarded: undici's `TypeError: terminated` from reading the
 * body escaped unclassified, and the worker recorded a permanent `agent_failed` saying
 * "TypeError: terminated". Bedrock's was already retryable, but said the SDK's "inspect the
 * hidden field {error}.$response", which no user can. Local servers speaking Chat
 * Completions, Messages and Converse (HTTP/1.1, and HTTP/2 as the SDK's default handler).
 */
import type { ServerResponse } from 'node:http';
import { constants as http2, createServer as createHttp2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { AgentRequest } from '../../functions/core/agent/agent';
import { anthropicProvider } from '../../functions/core/agent/anthropic';
import type { ChatProvider } from '../../functions/core/agent/conversation';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { runOf } from '../../functions/core/agent/run-record';
import type { Tool } from '../../functions/core/agent/tools';
import { bedrockProvider } from '../../functions/aws/bedrock-provider';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

type Answer = (res: ServerResponse) => void;
let llm: LocalServer;
let script: Answer[] = [];
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => (script.shift() ?? ((r: ServerResponse) => sendJson(r, 500, { error: { message: 'no script' } })))(res));
});
afterAll(async () => llm.close());
beforeEach(() => {
  script = [];
  llm.requests.length = 0;
});

/** `200`, the headers (content-length of the whole body) and its first 60 bytes; then the server closes the connection. */
const cutMidBody = (body: unknown): Answer => (res) => {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  // Closed once the bytes are out: the client reads the headers and the start, then the end of the stream.
  res.write(text.slice(0, 60), () => res.socket?.end());
};
/** Headers and the start of the body, then nothing more: the run's time runs out while reading. */
const stallMidBody = (body: unknown): Answer => (res) => {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.write(text.slice(0, 60));
};

const lookup: Tool = { name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: {} }, run: async () => 'found: 42' };
const request = (overrides: Partial<AgentRequest> = {}): AgentRequest => ({
  system: 'S', prompt: 'P', rendered: 'P', allowedTools: ['lookup'], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {}, ...overrides,
});
const run = (provider: ChatProvider, overrides: Partial<AgentRequest> = {}) => runToolLoop(request(overrides), { provider, tools: { lookup }, delivery: { timeout_ms: 1000, codehost: {} } })
  .then((reply) => ({ answered: reply.text }), (error: unknown) => error);

const chat = {
  name: 'OpenAI-compatible Chat Completions',
  provider: () => openAiProvider({ baseUrl: `${llm.url}/v1`, apiKey: 'sk-test', model: 'gpt-test' }),
  answer: { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'A long review '.repeat(50) }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 200 } },
  toolCall: { id: 'c0', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 100, completion_tokens: 20 } },
};
const messages = {
  name: 'Anthropic Messages',
  provider: () => anthropicProvider({ baseUrl: llm.url, apiKey: 'sk-ant-test', model: 'claude-test' }),
  answer: { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'A long review '.repeat(50) }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 200 } },
  toolCall: { id: 'msg_0', type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }], stop_reason: 'tool_use', usage: { input_tokens: 100, output_tokens: 20 } },
};

describe.each([chat, messages])('$name', ({ provider, answer, toolCall }) => {
  test('a connection cut mid-body is a retryable provider_unavailable that says so, not an unclassified TypeError', async () => {
    script = [cutMidBody(answer)];
    const error = await run(provider());
    expect(error).toMatchObject({ name: 'HookError', code: 'provider_unavailable', retryable: true, message: expect.stringContaining('closed the connection while answering') });
    expect(llm.requests).toHaveLength(1);
  });

  test("a cut at the second step keeps the first step's tokens on the error (the run's usage and the budget count them)", async () => {
    script = [(res) => sendJson(res, 200, toolCall), cutMidBody(answer)];
    const error = await run(provider());
    expect(error).toMatchObject({ code: 'provider_unavailable', retryable: true });
    expect(runOf(error)?.usage).toMatchObject({ input_tokens: 100, output_tokens: 20, steps: 1 });
  });

  test("the run's time running out while the body is read is still agent_timeout, not a network error", async () => {
    script = [stallMidBody(answer)];
    const error = await run(provider(), { timeoutMs: 300 });
    expect(error).toMatchObject({ code: 'agent_timeout', retryable: true });
  });
});

/** Converse over HTTP/2 (the SDK's default handler): the answer's stream is reset after its start. */
async function startHttp2Converse(body: unknown): Promise<{ url: string; close(): Promise<void> }> {
  const server = createHttp2Server();
  server.on('stream', (stream) => {
    stream.on('error', () => undefined);
    stream.resume();
    stream.on('end', () => {
      const text = JSON.stringify(body);
      stream.respond({ ':status': 200, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
      stream.write(text.slice(0, 60), () => stream.close(http2.NGHTTP2_INTERNAL_ERROR));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('Bedrock Converse', () => {
  const converse = { output: { message: { role: 'assistant', content: [{ text: 'A long review '.repeat(50) }] } }, stopReason: 'end_turn', usage: { inputTokens: 10, outputTokens: 200 } };
  const credentials = { accessKeyId: 'AKID', secretAccessKey: 's' };
  const expectCut = (error: unknown) => {
    expect(error).toMatchObject({ code: 'provider_unavailable', retryable: true, message: expect.stringContaining("Bedrock's answer could not be read (the connection closed while answering") });
    expect((error as Error).message).not.toMatch(/hidden field|\$response/);
  };

  test('HTTP/1.1: a connection cut mid-body is the same retryable provider_unavailable, without the SDK\'s hint about a hidden field', async () => {
    script = [cutMidBody(converse)];
    const client = new BedrockRuntimeClient({ endpoint: llm.url, region: 'eu-west-1', credentials, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
    expectCut(await run(bedrockProvider(client, 'anthropic.claude-test')));
  });

  test('HTTP/2, the SDK\'s default: a stream reset mid-body is the same', async () => {
    const server = await startHttp2Converse(converse);
    const client = new BedrockRuntimeClient({ endpoint: server.url, region: 'eu-west-1', credentials, maxAttempts: 1 });
    try {
      expectCut(await run(bedrockProvider(client, 'anthropic.claude-test')));
    } finally {
      client.destroy();
      await server.close();
    }
  });
});
