/**
 * The agent port and its errors. Providers (echo, openai, bedrock) implement `Agent`;
 * the worker only sees a reply or a classified failure.
 */
import { unforged } from '../delivery/findings';
import type { Logger } from '../log';
import type { QueueMessage } from '../types';
import type { AgentRun } from './run-record';

export interface AgentRequest {
  system: string;
  /** The rendered prompt, fenced as untrusted. */
  prompt: string;
  /** The rendered prompt before fencing (echo returns it unchanged). */
  rendered: string;
  /** Tools the attached skills declare; a call to any other tool is refused. */
  allowedTools: string[];
  timeoutMs: number;
  maxSteps: number;
  /** The reply's token limit (`agent.max_tokens` or the subscription's); absent: the provider's default. */
  maxTokens?: number;
  /** The event being handled, for tools that read the pull/merge request it names. */
  message: QueueMessage;
  payload: Record<string, unknown>;
  /** The worker's logger for this event (event id, subscription), handed to the tools. */
  logger?: Logger;
}

export interface AgentReply {
  text: string;
  steps: number;
  /** Tool calls refused because no attached skill declares them. */
  refusedTools: string[];
  /** Usage and transcript (model providers; echo has none). */
  run?: AgentRun;
  /** The answer ended for a reason hookagent does not know: that reason (stopReasonText); the text carries a note. */
  unknownStop?: string;
}

export interface Agent {
  run(request: AgentRequest): Promise<AgentReply>;
}

/**
 * `echo`, the default provider: the reply is the rendered prompt, payload text. Only the tool
 * loop's replies carry hookagent's hidden blocks (findings.ts), so a prompt that starts like
 * one is quoted, as the loop quotes the model's text; anything else is repeated unchanged.
 */
export const echoAgent: Agent = {
  run: async (request) => ({ text: unforged(request.rendered), steps: 0, refusedTools: [] }),
};
