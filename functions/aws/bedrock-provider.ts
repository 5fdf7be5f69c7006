/** Bedrock Converse API with tool use (IAM credentials from the standard chain). */
import {
  BedrockRuntimeClient, ConverseCommand, type ContentBlock, type Message, type Tool as BedrockTool,
} from '@aws-sdk/client-bedrock-runtime';
import { stopReasonText, withSpentTurn, type ChatProvider, type ProviderTurn, type StopReason, type Turn } from '../core/agent/conversation';
import { HookError } from '../core/errors';

/** Converse stop reasons for an answer the model did not finish well-formed (a broken toolUse, unparsable output). */
const MALFORMED = new Set(['malformed_model_output', 'malformed_tool_use']);

/** The SDK's hint appended to an answer whose body it could not read. */
const DESERIALIZATION = /\n\s*Deserialization error:/;

const RETRYABLE = new Set(['ThrottlingException', 'ServiceUnavailableException', 'InternalServerException', 'ModelTimeoutException', 'ModelNotReadyException', 'TimeoutError']);

function toMessages(conversation: Turn[]): Message[] {
  return conversation.map((turn): Message => {
    // Converse refuses blank text blocks ("The text field in the ContentBlock object … is
    // blank"), though Claude returns them itself (a "\n\n" beside a toolUse): as for Anthropic.
    if (turn.role === 'user') return { role: 'user', content: [{ text: turn.text.trim() ? turn.text : '…' }] };
    if (turn.role === 'assistant') {
      const content: ContentBlock[] = turn.text.trim() ? [{ text: turn.text }] : [];
      for (const call of turn.toolCalls) content.push({ toolUse: { toolUseId: call.id, name: call.name, input: (call.input ?? {}) as never } });
      return { role: 'assistant', content: content.length > 0 ? content : [{ text: '…' }] };
    }
    return {
      role: 'user',
      content: turn.results.map((r) => ({ toolResult: { toolUseId: r.id, content: [{ text: r.content }], status: r.isError ? 'error' : 'success' } })),
    };
  });
}

/** Converse `stopReason`, provider-neutral. */
export function bedrockStop(reason: string | undefined): StopReason | undefined {
  switch (reason) {
    case undefined: return undefined;
    case 'end_turn': case 'stop_sequence': return 'end';
    case 'tool_use': return 'tool_use';
    case 'max_tokens': case 'model_context_window_exceeded': return 'max_tokens';
    case 'content_filtered': case 'guardrail_intervened': return 'content_filter';
    default: return 'other';
  }
}

export function bedrockProvider(client: BedrockRuntimeClient, modelId: string): ChatProvider {
  return {
    name: 'bedrock',
    model: modelId,
    async turn(system, conversation, tools, signal, options): Promise<ProviderTurn> {
      const toolConfig = tools.length > 0
        ? { tools: tools.map((t): BedrockTool => ({ toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.parameters as never } } })) }
        : undefined;
      try {
        const result = await client.send(new ConverseCommand({
          modelId, system: [{ text: system }], messages: toMessages(conversation), ...(toolConfig ? { toolConfig } : {}),
          ...(options?.maxTokens ? { inferenceConfig: { maxTokens: options.maxTokens } } : {}),
        }), { abortSignal: signal });
        const content = result.output?.message?.content ?? [];
        const stop = bedrockStop(result.stopReason);
        const u = result.usage;
        const usage = u ? { input: u.inputTokens ?? 0, output: u.outputTokens ?? 0, ...(u.cacheReadInputTokens ? { cacheRead: u.cacheReadInputTokens } : {}), ...(u.cacheWriteInputTokens ? { cacheWrite: u.cacheWriteInputTokens } : {}) } : undefined;
        const answered = {
          text: content.flatMap((block) => (block.text ? [block.text] : [])).join(''),
          toolCalls: content.flatMap((block) => (block.toolUse ? [{ id: block.toolUse.toolUseId ?? '', name: block.toolUse.name ?? '', input: block.toolUse.input }] : [])),
          ...(usage ? { usage } : {}),
        };
        if (MALFORMED.has(result.stopReason ?? '')) {
          // Half an answer ("Let me read the diff." before a broken toolUse) is no reply: never posted. Billed, so counted.
          throw withSpentTurn(new HookError('provider_response', `Bedrock: the model's output was malformed (${result.stopReason}); nothing was posted`, { retryable: true }), answered);
        }
        return { ...(stop ? { stop } : {}), ...(stop === 'other' ? { unknownStop: stopReasonText(result.stopReason) } : {}), ...answered };
      } catch (error) {
        if (signal.aborted || error instanceof HookError) throw error;
        const name = error instanceof Error ? error.name : 'Error';
        const message = error instanceof Error ? error.message : String(error);
        if (DESERIALIZATION.test(message)) {
          // Answered, but its body could not be read: cut part-way (HTTP/1.1 "aborted", an HTTP/2 stream reset, JSON
          // that ends early) or not JSON. A network error, as the other providers' cut answers are; said without
          // the SDK's hint to inspect a hidden field of the error, which no user can.
          throw new HookError('provider_unavailable', `Bedrock's answer could not be read (the connection closed while answering, or the body is not JSON): ${message.split('\n')[0]}`, { retryable: true });
        }
        if (RETRYABLE.has(name)) throw new HookError('provider_unavailable', `Bedrock: ${name}: ${message}`, { retryable: true });
        if (name === 'AccessDeniedException' || name === 'UnrecognizedClientException') throw new HookError('provider_auth', `Bedrock refused the credentials: ${message}`);
        if (name === 'ResourceNotFoundException') throw new HookError('provider_model', `Bedrock: ${name}: ${message}`);
        // A refused request (a bad field, a context too long), not an unknown model.
        if (name === 'ValidationException') throw new HookError(/model identifier|model id|on-demand throughput/i.test(message) ? 'provider_model' : 'provider_request', `Bedrock: ${name}: ${message}`);
        throw new HookError('provider_unavailable', `Bedrock: ${name}: ${message}`, { retryable: !(error instanceof Error && '$fault' in error && (error as { $fault?: string }).$fault === 'client') });
      }
    },
  };
}

export function bedrockClient(region: string | undefined): BedrockRuntimeClient {
  return new BedrockRuntimeClient(region ? { region } : {});
}
