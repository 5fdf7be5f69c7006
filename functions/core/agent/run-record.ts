/**
 * What one agent run leaves behind: its usage (tokens, steps, tool calls with duration
 * and result size) and its transcript (system prompt hash, the fenced user message, each
 * tool call with its input and capped result, the final reply). The loop fills a
 * recorder; a failed run carries what it had recorded on its error, so tokens spent on a
 * reply that is then refused are still counted.
 */
import { createHash } from 'node:crypto';
import type { AgentUsage } from '../types';
import type { StopReason, TurnUsage } from './conversation';
import { cutText } from '../cut-text';

/** What a transcript keeps of one tool result, input or model text. */
export const TRANSCRIPT_TEXT_CAP = 4096;
/** What a transcript keeps of the reply. */
const TRANSCRIPT_REPLY_CAP = 64 * 1024;

export interface TranscriptToolCall {
  name: string;
  input: unknown;
  ok: boolean;
  ms: number;
  bytes: number;
  /** The result as the model saw it, capped at TRANSCRIPT_TEXT_CAP characters. */
  result: string;
}

export interface TranscriptStep {
  step: number;
  /** The model's text alongside its tool calls (or its answer). */
  text: string;
  stop?: StopReason;
  /** With `stop: other`: the provider's own reason (conversation.ts stopReasonText). */
  stop_reason?: string;
  tool_calls: TranscriptToolCall[];
}

export interface Transcript {
  v: 1;
  provider: string;
  model?: string;
  system_sha256: string;
  /** The fenced user message. */
  user: string;
  steps: TranscriptStep[];
  /** Set when a reply cut at the token limit was asked again, shorter. */
  retried_shorter?: boolean;
  reply?: string;
  /**
   * The transcripts of the event's earlier runs (a run that spent tokens and failed, then
   * the queue's retry), oldest first: the record's usage sums every run, and so the story
   * keeps every run.
   */
  earlier?: Transcript[];
}

/** A run's usage as recorded (`estimated`: some of its tokens are hookagent's estimate). */
export type RecordedUsage = AgentUsage;

export interface AgentRun {
  usage: RecordedUsage;
  transcript: Transcript;
}

/** True when a recorded usage (a run's, an event record's) holds estimated tokens. */
export function usageEstimated(usage: AgentUsage | undefined): boolean {
  return usage?.estimated === true;
}

/**
 * A usage in one line, as the CLI prints it: "openai llama3: 120 in, 9 out, …"; estimated
 * counts carry "~" and the line says so.
 */
export function usageSummary(usage: AgentUsage): string {
  const estimated = usageEstimated(usage);
  const n = (v: number) => (estimated ? `~${v}` : String(v));
  return `${usage.provider}${usage.model ? ` ${usage.model}` : ''}: ${n(usage.input_tokens)} in, ${n(usage.output_tokens)} out, ${usage.cache_read_tokens ?? 0} cache read, ${usage.cache_write_tokens ?? 0} cache write, ${usage.steps} step(s)${estimated ? ' (estimated: the provider reported no token counts)' : ''}`;
}

export const capText = (text: string, cap = TRANSCRIPT_TEXT_CAP): string =>
  text.length > cap ? `${cutText(text, cap)}…[truncated: ${text.length - cap} more characters]` : text;

export class RunRecorder {
  readonly usage: RecordedUsage;
  readonly transcript: Transcript;

  constructor(provider: string, model: string | undefined, system: string, user: string) {
    this.usage = { provider, ...(model ? { model } : {}), input_tokens: 0, output_tokens: 0, steps: 0, tool_calls: [] };
    this.transcript = {
      v: 1, provider, ...(model ? { model } : {}), system_sha256: createHash('sha256').update(system).digest('hex'), user: capText(user, 16 * 1024), steps: [],
    };
  }

  turn(text: string, stop: StopReason | undefined, usage: TurnUsage | undefined, unknownStop?: string): TranscriptStep {
    this.usage.steps += 1;
    if (usage) {
      if (usage.estimated) this.usage.estimated = true;
      this.usage.input_tokens += usage.input;
      this.usage.output_tokens += usage.output;
      if (usage.cacheRead) this.usage.cache_read_tokens = (this.usage.cache_read_tokens ?? 0) + usage.cacheRead;
      if (usage.cacheWrite) this.usage.cache_write_tokens = (this.usage.cache_write_tokens ?? 0) + usage.cacheWrite;
    }
    const step: TranscriptStep = { step: this.usage.steps, text: capText(text), ...(stop ? { stop } : {}), ...(unknownStop !== undefined ? { stop_reason: unknownStop } : {}), tool_calls: [] };
    this.transcript.steps.push(step);
    return step;
  }

  toolCall(step: TranscriptStep, name: string, input: unknown, ok: boolean, ms: number, result: string): void {
    const bytes = Buffer.byteLength(result);
    this.usage.tool_calls?.push({ name, ms, bytes, ok });
    let shownInput = input;
    if (JSON.stringify(input ?? null).length > TRANSCRIPT_TEXT_CAP) shownInput = { truncated_input: capText(JSON.stringify(input)) };
    step.tool_calls.push({ name, input: shownInput, ok, ms, bytes, result: capText(result) });
  }

  snapshot(reply?: string): AgentRun {
    const usage = { ...this.usage, ...(this.usage.tool_calls?.length ? {} : { tool_calls: undefined }) };
    if (!usage.tool_calls) delete usage.tool_calls;
    return { usage, transcript: { ...this.transcript, ...(reply !== undefined ? { reply: capText(reply, TRANSCRIPT_REPLY_CAP) } : {}) } };
  }
}

/**
 * The run as it may be stored and shown: `mask` over every text its transcript keeps (the
 * user message, the model's text and stop reason, each tool call's input and result), and `reply`, when
 * given, as its reply (the worker's masked reply: its findings are encoded, so `mask` cannot
 * reach them in the loop's). The usage is unchanged.
 */
export function maskedRun(run: AgentRun, mask: (text: string) => string, reply?: string): AgentRun {
  const { reply: loopReply, ...t } = run.transcript;
  const steps = t.steps.map((step) => ({ ...step, text: mask(step.text), ...(step.stop_reason !== undefined ? { stop_reason: mask(step.stop_reason) } : {}), tool_calls: step.tool_calls.map((c) => ({ ...c, input: maskStrings(c.input, mask), result: mask(c.result) })) }));
  const shown = reply !== undefined ? capText(reply, TRANSCRIPT_REPLY_CAP) : loopReply === undefined ? undefined : mask(loopReply);
  return { usage: run.usage, transcript: { ...t, user: mask(t.user), steps, ...(shown !== undefined ? { reply: shown } : {}) } };
}

/** Every string in a JSON value masked. */
function maskStrings(value: unknown, mask: (text: string) => string): unknown {
  if (typeof value === 'string') return mask(value);
  if (Array.isArray(value)) return value.map((item) => maskStrings(item, mask));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskStrings(item, mask)]));
  return value;
}

const RUN = Symbol.for('hookagent.agentRun');

/** Attaches what a failed run recorded to its error. */
export function withRun<E>(error: E, run: AgentRun): E {
  if (error && typeof error === 'object') Object.defineProperty(error, RUN, { value: run, enumerable: false, configurable: true });
  return error;
}

/** What a failed run recorded, when its error carries it. */
export function runOf(error: unknown): AgentRun | undefined {
  return error && typeof error === 'object' ? ((error as Record<symbol, AgentRun | undefined>)[RUN]) : undefined;
}
