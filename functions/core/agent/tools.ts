/**
 * Read-only tools the agent may call, by name. A skill lists the tools it may use; the
 * loop offers only those and refuses any other call. Outputs are capped before they reach
 * the model. The code-host tools live in `./tools/` (review, triage, incremental diffs);
 * every URL they use is built from the validated subject by `delivery/codehost-api.ts`.
 */
import type { Config } from '../config/types';
import type { Logger } from '../log';
import type { QueueMessage } from '../types';
import type { ToolSpec } from './conversation';
import type { Finding } from '../delivery/findings';
import { FINDING_TOOLS } from './tools/findings';
import { REVIEW_TOOLS } from './tools/review';
import { TRIAGE_TOOLS } from './tools/triage';
import { cutText } from '../cut-text';

export const TOOL_OUTPUT_CAP = 20_000;

export interface ToolContext {
  message: QueueMessage;
  payload: Record<string, unknown>;
  delivery: Config['delivery'];
  signal: AbortSignal;
  /** The run's logger (event id, subscription), when it has one: code-host clients log their library's notes there. */
  logger?: Logger;
  /** Injected by tests: how rate-limit waits are slept, and the longest wait honoured in-process. */
  sleep?: (ms: number) => Promise<void>;
  maxWaitMs?: number;
  /** Where `record_finding` collects, one list per run (delivered with the reply). */
  findings?: Finding[];
  /** What the run's tools read, one per run (see `headRead`). */
  reads?: RunReads;
}

export interface RunReads {
  /** The change's head as the run's first diff read found it: every later diff read of the run shows that head (the reply names it). */
  head?: Promise<string>;
}

export interface Tool extends ToolSpec {
  run(input: unknown, context: ToolContext): Promise<string>;
}

export function capToolOutput(text: string): string {
  return text.length > TOOL_OUTPUT_CAP ? `${cutText(text, TOOL_OUTPUT_CAP)}\n…[truncated: ${text.length - TOOL_OUTPUT_CAP} more characters]` : text;
}

export const BUILTIN_TOOLS: Record<string, Tool> = { ...REVIEW_TOOLS, ...FINDING_TOOLS, ...TRIAGE_TOOLS };
