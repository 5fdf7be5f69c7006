/**
 * OpenAI-compatible Chat Completions (OpenAI, OpenRouter, Ollama, vLLM via `base_url`),
 * with function tool calls. Errors are classified: 429, 5xx, timeouts and network errors
 * (a connection cut mid-answer too) are retryable; 4xx (bad key, unknown model) are
 * permanent, with the provider's message.
 */
import { HookError } from '../errors';
import { stopReasonText, withSpentTurn, type ChatProvider, type ProviderTurn, type StopReason, type ToolCall, type ToolSpec, type Turn, type TurnUsage } from './conversation';
import { redactExcerpt, redactSecrets } from '../redact';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

interface OpenAiSettings {
  baseUrl: string;
  apiKey?: string;
  model: string;
}

type Message = Record<string, unknown>;

function toMessages(system: string, conversation: Turn[]): Message[] {
  const messages: Message[] = [{ role: 'system', content: system }];
  for (const turn of conversation) {
    if (turn.role === 'user') messages.push({ role: 'user', content: turn.text });
    else if (turn.role === 'assistant') {
      // An empty tool_calls array is refused by OpenAI ("empty array"): only sent when there are calls.
      messages.push({
        role: 'assistant', content: turn.text || null,
        ...(turn.toolCalls.length > 0 ? { tool_calls: turn.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) } })) } : {}),
      });
    } else {
      for (const r of turn.results) messages.push({ role: 'tool', tool_call_id: r.id, content: r.isError ? `ERROR: ${r.content}` : r.content });
    }
  }
  return messages;
}

/** `secrets`: masked before a non-JSON page is cut (a key split by the cut would no longer match whole). */
function providerMessage(body: string, secrets: readonly (string | undefined)[]): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const error = parsed.error;
    if (typeof error === 'string') return error;
    if (error && typeof error.message === 'string') return error.message;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // Not JSON (a proxy's HTML page): use the start of it.
  }
  return redactExcerpt(body, secrets, 300);
}

/** The provider's `Retry-After` (seconds or an HTTP date) carried on a retryable error, for paced retries. */
export function withRetryAfter(error: HookError, headers: Headers): HookError {
  const value = headers.get('retry-after');
  if (!error.retryable || !value) return error;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - Date.now();
  if (!Number.isFinite(ms) || ms < 0) return error;
  return new HookError(error.code, error.message, { retryable: true, retryAfterMs: ms, cause: error.cause });
}

/**
 * The body of a provider's answer. A connection cut part-way through it (a proxy or load
 * balancer dropping it after the headers: undici's "terminated") is a network error,
 * retryable like one cut before the answer; the run's timeout (`signal`) is the caller's.
 */
export async function answerBody(response: Response, signal: AbortSignal, provider: string): Promise<string> {
  try {
    return await response.text();
  } catch (error) {
    if (signal.aborted) throw error;
    const why = error instanceof Error ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ''}` : String(error);
    throw new HookError('provider_unavailable', `${provider} closed the connection while answering (${why})`, { retryable: true, cause: error });
  }
}

export function classifyHttpFailure(provider: string, status: number, message: string): HookError {
  // 408 (request timeout) and 409 (conflict) are transient: the official OpenAI and Anthropic SDKs retry them.
  if (status === 408 || status === 409) return new HookError('provider_unavailable', `${provider} answered ${status}: ${message}`, { retryable: true });
  if (status === 429) return new HookError('provider_rate_limited', `${provider} rate limit: ${message}`, { retryable: true });
  if (status >= 500) return new HookError('provider_unavailable', `${provider} answered ${status}: ${message}`, { retryable: true });
  if (status === 401 || status === 403) return new HookError('provider_auth', `${provider} refused the credentials: ${message}`);
  if (status === 404) return new HookError('provider_model', `${provider} does not know the model or endpoint: ${message}`);
  return new HookError('provider_request', `${provider} refused the request (${status}): ${message}`);
}

/** `finish_reason` of Chat Completions, provider-neutral. */
export function openAiStop(reason: unknown): StopReason | undefined {
  switch (reason) {
    case 'stop': return 'end';
    case 'tool_calls': case 'function_call': return 'tool_use';
    // Mistral's Chat Completions says `model_length` when the context window filled up (Anthropic's model_context_window_exceeded).
    case 'length': case 'model_length': return 'max_tokens';
    case 'content_filter': return 'content_filter';
    case undefined: case null: return undefined;
    // Not refused: a server may name a complete end its own way. Posted with a note (loop.ts).
    default: return 'other';
  }
}

/**
 * `finish_reason`s that say the server stopped the reply part-way, not the model: DeepSeek's
 * `insufficient_system_resource` (its inference system ran short), vLLM's `abort`. The text
 * is a fragment, never posted; another try may well answer in full. (A gateway's `error` is
 * a failed choice, read with its error below.)
 */
const INTERRUPTED = new Set<unknown>(['insufficient_system_resource', 'abort']);

/**
 * `usage`: prompt_tokens include the cached ones: reads (prompt_tokens_details.cached_tokens)
 * and, on OpenRouter, writes (prompt_tokens_details.cache_write_tokens); we count them apart.
 */
function openAiUsage(usage: unknown): TurnUsage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const u = usage as { prompt_tokens?: unknown; completion_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown; cache_write_tokens?: unknown } };
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
  const cached = num(u.prompt_tokens_details?.cached_tokens);
  const written = num(u.prompt_tokens_details?.cache_write_tokens);
  return {
    input: Math.max(0, num(u.prompt_tokens) - cached - written), output: num(u.completion_tokens),
    ...(cached ? { cacheRead: cached } : {}), ...(written ? { cacheWrite: written } : {}),
  };
}

/**
 * OpenAI itself takes max_completion_tokens (max_tokens is refused by its reasoning models);
 * compatible servers (OpenRouter, Ollama, vLLM) take max_tokens.
 */
export function maxTokensField(baseUrl: string): 'max_completion_tokens' | 'max_tokens' {
  return /^https:\/\/api\.openai\.com\//.test(`${baseUrl}/`) ? 'max_completion_tokens' : 'max_tokens';
}

export function openAiProvider(settings: OpenAiSettings): ChatProvider {
  const limitField = maxTokensField(settings.baseUrl);
  return {
    name: 'openai',
    model: settings.model,
    async turn(system, conversation, tools: ToolSpec[], signal, options): Promise<ProviderTurn> {
      const body: Record<string, unknown> = { model: settings.model, messages: toMessages(system, conversation) };
      if (options?.maxTokens) body[limitField] = options.maxTokens;
      if (tools.length > 0) body.tools = tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
      let response: Response;
      try {
        response = await fetch(`${settings.baseUrl}/chat/completions`, {
          method: 'POST', signal,
          headers: { 'content-type': 'application/json', ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}) },
          body: JSON.stringify(body),
        });
      } catch (error) {
        if (signal.aborted) throw error;
        throw new HookError('provider_unavailable', `Cannot reach ${settings.baseUrl}: ${error instanceof Error ? error.message : String(error)}`, { retryable: true });
      }
      const text = await answerBody(response, signal, 'The model provider');
      if (!response.ok && response.status === 429 && /insufficient_quota/.test(text)) {
        // OpenAI's "You exceeded your current quota": billing, which no retry fixes (its docs: check plan and billing).
        throw new HookError('provider_request', `The model provider's quota is used up (429 insufficient_quota), a retry will not help: ${redactSecrets(providerMessage(text, [settings.apiKey]), [settings.apiKey])}`);
      }
      if (!response.ok) throw withRetryAfter(classifyHttpFailure('The model provider', response.status, redactSecrets(providerMessage(text, [settings.apiKey]), [settings.apiKey])), response.headers);
      let parsed: { error?: unknown; usage?: unknown; choices?: Array<{ finish_reason?: unknown; error?: unknown; message?: { content?: unknown; refusal?: unknown; tool_calls?: Array<{ id?: unknown; function?: { name?: unknown; arguments?: unknown } }> } }> };
      try {
        parsed = JSON.parse(text) as typeof parsed;
      } catch {
        throw new HookError('provider_unavailable', 'The model provider answered with something that is not JSON', { retryable: true });
      }
      const choice = parsed.choices?.[0];
      const message = choice?.message;
      const toolCalls: ToolCall[] = (message?.tool_calls ?? []).map((call, index) => {
        let input: unknown = {};
        let inputError: string | undefined;
        const args = call.function?.arguments;
        try {
          // A string of JSON (OpenAI), or the object itself (llama.cpp's --tool-args-object, mlx-lm).
          if (typeof args === 'string') input = args ? JSON.parse(args) : {};
          else if (args !== undefined && args !== null && (typeof args !== 'object' || Array.isArray(args))) throw new Error('not an object');
          else if (args) input = args;
        } catch {
          input = { unparsable_arguments: args };
          inputError = 'The arguments of this call are not valid JSON; the tool was not run. Call it again with a JSON object as arguments.';
        }
        return { id: typeof call.id === 'string' ? call.id : `call_${index}`, name: String(call.function?.name ?? ''), input, ...(inputError ? { inputError } : {}) };
      });
      const usage = openAiUsage(parsed.usage);
      const content = contentText(message?.content);
      // A call that failed after the model started was billed: what it answered goes on the error, so the
      // run counts it (the provider's usage, else an estimate: loop.ts), in its usage and the budget.
      const billed = (error: HookError) => withSpentTurn(error, { text: content, toolCalls, ...(usage ? { usage } : {}) });
      // OpenRouter and other gateways answer 200 with an error once the model has started:
      // `{"error": {"code", "message"}}`, or a choice that ended with finish_reason "error".
      const failed = choice === undefined ? parsed.error : choice.finish_reason === 'error' ? choice.error ?? {} : undefined;
      if (failed !== undefined && failed !== null) {
        const e = (typeof failed === 'object' ? failed : { message: failed }) as { code?: unknown; message?: unknown };
        const status = typeof e.code === 'number' && e.code >= 400 && e.code < 600 ? e.code : 502;
        const said = typeof e.message === 'string' ? e.message : 'the model failed while answering';
        throw billed(classifyHttpFailure('The model provider', status, redactSecrets(said, [settings.apiKey])));
      }
      if (INTERRUPTED.has(choice?.finish_reason)) {
        throw billed(new HookError('provider_response', `The model provider interrupted the reply (finish_reason "${String(choice?.finish_reason)}"); nothing was posted`, { retryable: true }));
      }
      if (!message) throw new HookError('provider_response', 'The model provider answered without a message');
      // A refusal comes in `message.refusal` (content null): the model declined, it did not answer empty.
      if (typeof message.refusal === 'string' && message.refusal.trim() && !content.trim() && toolCalls.length === 0) {
        return { text: message.refusal, toolCalls, stop: 'content_filter', ...(usage ? { usage } : {}) };
      }
      const stop = openAiStop(choice?.finish_reason);
      return {
        text: content, toolCalls, ...(stop ? { stop } : {}),
        ...(stop === 'other' ? { unknownStop: stopReasonText(choice?.finish_reason) } : {}), ...(usage ? { usage } : {}),
      };
    },
  };
}

/**
 * The answer's text: a string (OpenAI), or a list of content parts (Mistral's reasoning
 * models: `thinking` chunks, then `text` ones): the text parts joined, the thinking left out.
 */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((part) => (part && typeof part === 'object' && (part as { type?: unknown }).type === 'text' && typeof (part as { text?: unknown }).text === 'string' ? [(part as { text: string }).text] : [])).join('');
}
