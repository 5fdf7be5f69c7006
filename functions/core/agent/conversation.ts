/** A provider-neutral conversation: what the tool loop keeps and each provider translates. */
import { cutText } from '../cut-text';

export interface ToolCall {
  id: string;
  name: string;
  /** Parsed arguments; a model that sends malformed JSON gets an error result. */
  input: unknown;
  /** Why the arguments could not be read (not JSON): the tool is not run, the model gets this as an error. */
  inputError?: string;
}

export interface ToolResult {
  id: string;
  name: string;
  content: string;
  isError: boolean;
}

export type Turn =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; toolCalls: ToolCall[] }
  | { role: 'tool'; results: ToolResult[] };

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/**
 * Why the model stopped, provider-neutral: `end` (a finished answer), `tool_use`,
 * `max_tokens` (cut at the limit), `content_filter` (refused by a safety filter), `other`.
 */
export type StopReason = 'end' | 'tool_use' | 'max_tokens' | 'content_filter' | 'other';

/** What is kept of a stop reason hookagent does not know (characters). */
export const MAX_STOP_REASON = 100;

/**
 * A stop reason hookagent does not know, as the record, the log and the reply's note name it:
 * the provider's text (JSON for a number or an object) on one line, without control or
 * invisible characters, cut at MAX_STOP_REASON. A blank one is shown quoted and escaped
 * (`""`, `"\n"`), so it does not read as no reason.
 */
export function stopReasonText(reason: unknown): string {
  // A parsed JSON value: stringify does not throw.
  const text = typeof reason === 'string' ? reason : JSON.stringify(reason) ?? String(reason);
  const shown = text.replace(/[\s\p{C}]+/gu, ' ').trim()
    || JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return shown.length > MAX_STOP_REASON ? `${cutText(shown, MAX_STOP_REASON)}…` : shown;
}

/** Tokens of one model call, as the provider reports them (or estimated: estimate.ts). */
export interface TurnUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** Not the provider's figure: it reported none, so hookagent estimated it from the text. */
  estimated?: true;
}

export interface ProviderTurn {
  text: string;
  toolCalls: ToolCall[];
  /** Absent: the provider did not say (treated as `end`). */
  stop?: StopReason;
  /** With `stop: 'other'`: the provider's own reason, as stopReasonText names it. */
  unknownStop?: string;
  usage?: TurnUsage;
}

/** Per-call settings: the reply's token limit (`agent.max_tokens` or the subscription's). */
export interface TurnOptions {
  maxTokens?: number;
  /**
   * When the run's time runs out (epoch ms; `agent.timeout` from the run's start). A provider
   * waits out a `retry-after` in place only when the wait ends before it; otherwise it fails
   * at once with the wait on the error (`retryAfterMs`), for the queue's paced retry.
   */
  deadline?: number;
}

/**
 * What a model call that failed after it was billed answered (a gateway's `finish_reason:
 * "error"`, vLLM's `abort`): its text and tool calls, and the provider's usage when it
 * reported one. The loop counts it as any answered call: that usage, else an estimate.
 */
export type SpentTurn = Pick<ProviderTurn, 'text' | 'toolCalls' | 'usage'>;

const SPENT = Symbol.for('hookagent.spentTurn');

export function withSpentTurn<E>(error: E, spent: SpentTurn): E {
  if (error && typeof error === 'object') Object.defineProperty(error, SPENT, { value: spent, enumerable: false, configurable: true });
  return error;
}

export function spentTurnOf(error: unknown): SpentTurn | undefined {
  return error && typeof error === 'object' ? (error as Record<symbol, SpentTurn | undefined>)[SPENT] : undefined;
}

/** One model call: the conversation so far in, the model's next turn out. */
export interface ChatProvider {
  /** `openai`, `anthropic`, `bedrock`: recorded in the event's usage. */
  readonly name?: string;
  readonly model?: string;
  turn(system: string, conversation: Turn[], tools: ToolSpec[], signal: AbortSignal, options?: TurnOptions): Promise<ProviderTurn>;
}
