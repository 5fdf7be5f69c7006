/**
 * Anthropic Messages API (`POST {base_url}/v1/messages`) over fetch, no SDK: tool use,
 * stop_reason, usage with prompt-cache counts, and prompt caching: the system prompt (with
 * the skills' instructions) and the conversation so far carry `cache_control` breakpoints,
 * so the later rounds of a tool loop, and the next event of the same subscription, read
 * them from the cache.
 *
 * 429 (`rate_limit_error`) and 529 (`overloaded_error`) are retried in place, at most twice,
 * after `retry-after` (or a short backoff) when that wait is short (`maxWaitMs`) and ends
 * before the run's time does (`TurnOptions.deadline`); otherwise, at once, they are
 * retryable failures for the queue carrying the wait asked for. Other 4xx are permanent;
 * network errors, a connection cut mid-answer too, are retryable (`provider_unavailable`).
 */
import { HookError } from '../errors';
import { stopReasonText, type ChatProvider, type ProviderTurn, type StopReason, type ToolCall, type Turn, type TurnUsage } from './conversation';
import { answerBody, classifyHttpFailure } from './openai';
import { redactExcerpt, redactSecrets } from '../redact';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';
/** The Messages API requires max_tokens; used when neither agent.max_tokens nor the subscription sets one. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

export interface AnthropicSettings {
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** In-place retries of 429/529 (default 2) and the backoff without retry-after (default 1000 ms). */
  retries?: number;
  backoffMs?: number;
  /** Longest wait for one retry-after (default 20 s); a longer one is left to the queue. */
  maxWaitMs?: number;
}

type Block = Record<string, unknown>;
type Message = { role: 'user' | 'assistant'; content: Block[] };
const EPHEMERAL = { type: 'ephemeral' } as const;

export function toAnthropicMessages(conversation: Turn[]): Message[] {
  const messages: Message[] = [];
  const push = (role: Message['role'], content: Block[]) => {
    const last = messages[messages.length - 1];
    // Consecutive turns of one role become one message (tool results and a user note).
    if (last && last.role === role) last.content.push(...content);
    else messages.push({ role, content });
  };
  for (const turn of conversation) {
    // The API refuses empty or whitespace-only text blocks ("text content blocks must contain
    // non-whitespace text"), though it returns them itself (a "\n\n" before a tool_use).
    if (turn.role === 'user') push('user', [{ type: 'text', text: turn.text.trim() ? turn.text : '…' }]);
    else if (turn.role === 'assistant') {
      const content: Block[] = turn.text.trim() ? [{ type: 'text', text: turn.text }] : [];
      for (const call of turn.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input ?? {} });
      push('assistant', content.length > 0 ? content : [{ type: 'text', text: '…' }]);
    } else {
      push('user', turn.results.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.content, ...(r.isError ? { is_error: true } : {}) })));
    }
  }
  // Cache the conversation so far: the next round re-reads it.
  const lastBlock = messages[messages.length - 1]?.content.at(-1);
  if (lastBlock) lastBlock.cache_control = EPHEMERAL;
  return messages;
}

export function anthropicStop(reason: unknown): StopReason | undefined {
  switch (reason) {
    case undefined: case null: return undefined;
    case 'end_turn': case 'stop_sequence': case 'pause_turn': return 'end';
    case 'tool_use': return 'tool_use';
    case 'max_tokens': case 'model_context_window_exceeded': return 'max_tokens';
    case 'refusal': return 'content_filter';
    // Not refused: a server may name a complete end its own way. Posted with a note (loop.ts).
    default: return 'other';
  }
}

function anthropicUsage(value: unknown): TurnUsage | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const u = value as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
  const cacheRead = num(u.cache_read_input_tokens);
  const cacheWrite = num(u.cache_creation_input_tokens);
  return { input: num(u.input_tokens), output: num(u.output_tokens), ...(cacheRead ? { cacheRead } : {}), ...(cacheWrite ? { cacheWrite } : {}) };
}

/** `secrets`: masked before a non-JSON page is cut (a key split by the cut would no longer match whole). */
function errorMessage(body: string, secrets: readonly (string | undefined)[]): string {
  try {
    const parsed = JSON.parse(body) as { error?: { type?: unknown; message?: unknown } };
    if (parsed.error && typeof parsed.error.message === 'string') return `${typeof parsed.error.type === 'string' ? `${parsed.error.type}: ` : ''}${parsed.error.message}`;
  } catch {
    // Not JSON (a proxy's page).
  }
  return redactExcerpt(body, secrets, 300);
}

/** retry-after in ms (seconds or an HTTP date), or undefined. */
function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

const wait = (ms: number, signal: AbortSignal) => new Promise<void>((resolve, reject) => {
  const onAbort = () => {
    clearTimeout(timer);
    reject(signal.reason as Error);
  };
  const timer = setTimeout(() => {
    signal.removeEventListener('abort', onAbort);
    resolve();
  }, ms);
  signal.addEventListener('abort', onAbort, { once: true });
});

export function anthropicProvider(settings: AnthropicSettings): ChatProvider {
  const retries = settings.retries ?? 2;
  return {
    name: 'anthropic',
    model: settings.model,
    async turn(system, conversation, tools, signal, options): Promise<ProviderTurn> {
      const body: Record<string, unknown> = {
        model: settings.model,
        max_tokens: options?.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
        system: [{ type: 'text', text: system, cache_control: EPHEMERAL }],
        messages: toAnthropicMessages(conversation),
      };
      if (tools.length > 0) body.tools = tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
      const headers: Record<string, string> = { 'content-type': 'application/json', 'anthropic-version': ANTHROPIC_VERSION };
      if (settings.apiKey) headers['x-api-key'] = settings.apiKey;
      const payload = JSON.stringify(body);
      for (let attempt = 0; ; attempt++) {
        let response: Response;
        try {
          response = await fetch(`${settings.baseUrl}/v1/messages`, { method: 'POST', signal, headers, body: payload });
        } catch (error) {
          if (signal.aborted) throw error;
          throw new HookError('provider_unavailable', `Cannot reach ${settings.baseUrl}: ${error instanceof Error ? error.message : String(error)}`, { retryable: true });
        }
        const text = await answerBody(response, signal, 'Anthropic');
        if (response.status === 429 || response.status === 529) {
          const asked = retryAfterMs(response.headers.get('retry-after'));
          const delay = asked ?? (settings.backoffMs ?? 1000) * 2 ** attempt;
          // Waited in place only when the run would still have time after it: a wait that
          // outlasts agent.timeout would end the run as agent_timeout, with the wait lost.
          const left = options?.deadline === undefined ? Number.POSITIVE_INFINITY : options.deadline - Date.now();
          const fits = delay < left;
          if (attempt < retries && delay <= (settings.maxWaitMs ?? 20_000) && fits) {
            await wait(delay, signal);
            continue;
          }
          const code = response.status === 429 ? 'provider_rate_limited' : 'provider_unavailable';
          const why = attempt < retries && !fits ? `; the wait of ${Math.ceil(delay / 1000)} s is longer than the ${Math.max(0, Math.floor(left / 1000))} s the run has left (agent.timeout), so it is left to the queue` : '';
          // A wait longer than we wait in place is the queue's to keep (paced retry), as OpenAI's is.
          throw new HookError(code, `Anthropic answered ${response.status} (${redactSecrets(errorMessage(text, [settings.apiKey]), [settings.apiKey])}) after ${attempt + 1} attempt${attempt === 0 ? '' : 's'}${why}`, { retryable: true, ...(asked !== undefined ? { retryAfterMs: asked } : {}) });
        }
        if (!response.ok) throw classifyHttpFailure('Anthropic', response.status, redactSecrets(errorMessage(text, [settings.apiKey]), [settings.apiKey]));
        let parsed: { content?: Array<{ type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown }>; stop_reason?: unknown; usage?: unknown };
        try {
          parsed = JSON.parse(text) as typeof parsed;
        } catch {
          throw new HookError('provider_unavailable', 'Anthropic answered with something that is not JSON', { retryable: true });
        }
        if (!Array.isArray(parsed.content)) throw new HookError('provider_response', 'Anthropic answered without content');
        const toolCalls: ToolCall[] = parsed.content.flatMap((block, index) => (block.type === 'tool_use'
          ? [{ id: typeof block.id === 'string' ? block.id : `toolu_${index}`, name: String(block.name ?? ''), input: block.input ?? {} }]
          : []));
        const reply = parsed.content.flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : [])).join('');
        const stop = anthropicStop(parsed.stop_reason);
        const usage = anthropicUsage(parsed.usage);
        return { text: reply, toolCalls, ...(stop ? { stop } : {}), ...(stop === 'other' ? { unknownStop: stopReasonText(parsed.stop_reason) } : {}), ...(usage ? { usage } : {}) };
      }
    },
  };
}
