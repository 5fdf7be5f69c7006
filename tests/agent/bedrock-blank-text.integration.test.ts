/**
 * Bedrock Converse refuses a text content block that is empty or only
 * whitespace (400 ValidationException "The text field in the ContentBlock object at
 * messages.N.content.M is blank. Add text to the text field, and try again." — see e.g.
 * langchain-ai/langchainjs#8618, NousResearch/hermes-agent#61318). Claude models return a
 * whitespace-only text block ("\n\n") beside a toolUse block; the Anthropic provider stopped
 * sending such text back (README "Anthropic returns whitespace-only text blocks beside
 * tool_use blocks but refuses them in a request"), the Bedrock provider still sends it, so
 * the second round of the tool loop is refused and the event fails permanently.
 *
 * The local server speaks the Converse wire format and applies Bedrock's validation rule.
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { AgentRequest } from '../../functions/core/agent/agent';
import type { Turn } from '../../functions/core/agent/conversation';
import { bedrockProvider } from '../../functions/aws/bedrock-provider';
import { runToolLoop } from '../../functions/core/agent/loop';
import { runOf } from '../../functions/core/agent/run-record';
import type { Tool } from '../../functions/core/agent/tools';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let bedrock: LocalServer;
let script: unknown[] = [];
beforeAll(async () => {
  bedrock = await startLocalServer((req, res) => {
    const body = JSON.parse(req.body) as { messages: Array<{ content: Array<{ text?: string }> }> };
    for (const [m, message] of body.messages.entries()) {
      for (const [c, block] of message.content.entries()) {
        if (typeof block.text === 'string' && block.text.trim() === '') {
          return sendJson(res, 400, { message: `The text field in the ContentBlock object at messages.${m}.content.${c} is blank. Add text to the text field, and try again.` }, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
        }
      }
    }
    const next = script.shift() as { error?: string; message?: string } | undefined;
    if (next?.error) return sendJson(res, 400, { message: next.message }, { 'x-amzn-errortype': `${next.error}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
    sendJson(res, 200, next);
  });
});
afterAll(async () => bedrock.close());

const lookup: Tool = { name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: { q: { type: 'string' } } }, run: async () => 'found: 42' };
const request: AgentRequest = {
  system: 'S', prompt: 'P', rendered: 'P', allowedTools: ['lookup'], timeoutMs: 5000, maxSteps: 4,
  message: { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd', received_at: '' },
  payload: {},
};

test('a whitespace-only text block beside a toolUse is not sent back to Bedrock (the next round is not refused)', async () => {
  script = [
    { output: { message: { role: 'assistant', content: [{ text: '\n\n' }, { toolUse: { toolUseId: 'tooluse_1', name: 'lookup', input: { q: 'disk' } } }] } }, stopReason: 'tool_use', usage: { inputTokens: 50, outputTokens: 10, totalTokens: 60 } },
    { output: { message: { role: 'assistant', content: [{ text: 'The answer is 42.' }] } }, stopReason: 'end_turn', usage: { inputTokens: 70, outputTokens: 8, totalTokens: 78 } },
  ];
  const client = new BedrockRuntimeClient({ endpoint: bedrock.url, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
  const reply = await runToolLoop(request, { provider: bedrockProvider(client, 'anthropic.claude-test'), tools: { lookup }, delivery: { timeout_ms: 1000, codehost: {} } });
  expect(reply.text).toBe('The answer is 42.');
  // The second round carries the toolUse alone, then its result.
  const second = JSON.parse(bedrock.requests.at(-1)!.body) as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
  expect(second.messages[1]).toEqual({ role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'lookup', input: { q: 'disk' } } }] });
});

test('a reply cut at the token limit that is only whitespace is sent back as a placeholder on the shorter retry', async () => {
  script = [
    { output: { message: { role: 'assistant', content: [{ text: '  \n' }] } }, stopReason: 'max_tokens', usage: { inputTokens: 50, outputTokens: 10, totalTokens: 60 } },
    { output: { message: { role: 'assistant', content: [{ text: 'Short answer.' }] } }, stopReason: 'end_turn', usage: { inputTokens: 70, outputTokens: 3, totalTokens: 73 } },
  ];
  const client = new BedrockRuntimeClient({ endpoint: bedrock.url, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
  const reply = await runToolLoop(request, { provider: bedrockProvider(client, 'anthropic.claude-test'), tools: { lookup }, delivery: { timeout_ms: 1000, codehost: {} } });
  expect(reply.text).toBe('Short answer.');
  const retry = JSON.parse(bedrock.requests.at(-1)!.body) as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
  expect(retry.messages[1]).toEqual({ role: 'assistant', content: [{ text: '…' }] });
});

test('a ValidationException about the request is a refused request (provider_request); one about the model id stays provider_model', async () => {
  const client = new BedrockRuntimeClient({ endpoint: bedrock.url, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
  const turn = (conversation: Turn[]) => bedrockProvider(client, 'anthropic.claude-test').turn('S', conversation, [], new AbortController().signal).then(() => undefined, (e: unknown) => e);
  script = [{ error: 'ValidationException', message: 'Input is too long for requested model.' }];
  expect(await turn([{ role: 'user', text: 'P' }])).toMatchObject({ code: 'provider_request', retryable: false, message: expect.stringContaining('Input is too long') });
  script = [{ error: 'ValidationException', message: 'The provided model identifier is invalid.' }];
  expect(await turn([{ role: 'user', text: 'P' }])).toMatchObject({ code: 'provider_model', retryable: false });
  // A blank user turn is sent as a placeholder, never refused.
  script = [{ output: { message: { role: 'assistant', content: [{ text: 'ok' }] } }, stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }];
  expect(await turn([{ role: 'user', text: ' \n ' }])).toBeUndefined();
});

test.each(['malformed_tool_use', 'malformed_model_output'])('stopReason %s: half an answer is never the reply; a retryable provider_response carrying the billed tokens', async (reason) => {
  script = [{ output: { message: { role: 'assistant', content: [{ text: 'Let me read the diff.' }] } }, stopReason: reason, usage: { inputTokens: 40, outputTokens: 7, totalTokens: 47 } }];
  const client = new BedrockRuntimeClient({ endpoint: bedrock.url, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
  const error = await runToolLoop(request, { provider: bedrockProvider(client, 'anthropic.claude-test'), tools: { lookup }, delivery: { timeout_ms: 1000, codehost: {} } }).then(() => undefined, (e: unknown) => e);
  expect(error).toMatchObject({ code: 'provider_response', retryable: true, message: expect.stringContaining(`malformed (${reason}); nothing was posted`) });
  // The failed call was billed: the run's usage counts it.
  expect(runOf(error)?.usage).toMatchObject({ input_tokens: 40, output_tokens: 7, steps: 1 });
});