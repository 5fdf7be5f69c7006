/**
 * The agent's part of one message: render the prompt, load the skills, check the budget,
 * run the agent and record its run. Either the reply (masked of configured secrets, and
 * saved) or the message's outcome when the run cannot or must not happen.
 * `postableReply` and `recordableRun` are shared with `webhook test --dry-run`, so it shows
 * what a run stores and posts.
 */
import type { Logger } from '../log';
import { describeError, isHookError } from '../errors';
import type { Skill } from '../skills/skill';
import { renderPrompt } from '../templates/template';
import type { QueueMessage, Subscription } from '../types';
import { fencePrompt, systemPrompt } from '../agent/system-prompt';
import { maskedRun, runOf, type AgentRun } from '../agent/run-record';
import { maskReply } from '../delivery/findings';
import { redactSecrets } from '../redact';
import { recordAgentRun } from './agent-record';
import { budgetRefusal } from './budget';
import { giveBackRun } from './gates';
import type { HeldLease } from './lease';
import type { RecordWriter } from './record';
import { secretsOf } from './secrets';
import type { MessageOutcome, WorkerDeps } from './process';

/** One message in progress, as the worker's steps share it. */
export interface Step {
  deps: WorkerDeps;
  message: QueueMessage;
  writer: RecordWriter;
  logger: Logger;
  /** When the work on this receive started (ms). */
  started: number;
  /** The worker lease it runs under, when the worker has leases. */
  lease?: HeldLease;
  /** Ends the record failed and dead-letters the message. */
  finalFailure(code: string, said: string): Promise<MessageOutcome>;
  /** Gives the message back to the queue (failed for good after the last receive). */
  retryLater(code: string, said: string, retryAfterMs?: number): Promise<MessageOutcome>;
}

/**
 * A configured secret never leaves in a reply (a tool's error text in the unread-diff note, a
 * credential the model repeats in its text or a finding): masked part by part before the reply
 * is stored or posted.
 */
export function postableReply(text: string, config: object): string {
  return maskReply(text, secretsOf(config));
}

/** The run as it is recorded: its transcript masked as the reply is, with `reply` (postableReply's) as its reply. */
export function recordableRun(run: AgentRun | undefined, config: object, reply?: string): AgentRun | undefined {
  const secrets = secretsOf(config);
  return run && maskedRun(run, (text) => redactSecrets(text, secrets), reply);
}

export async function runAgentStep(step: Step, subscription: Subscription, payload: Record<string, unknown>): Promise<{ reply: string } | MessageOutcome> {
  const { deps, message, writer, logger, started, finalFailure, retryLater } = step;
  // Only runs that happen count against max_runs_per_hour: an event that ends here without
  // calling the agent gives back the run the gate counted for it, unless an earlier attempt
  // called it (giveBackRun); a failed give-back leaves one too many.
  const giveBack = async (): Promise<void> => {
    try {
      await giveBackRun(writer, subscription, deps.counters);
    } catch (error) {
      logger.warn('the run counted for this event could not be given back', { reason: describeError(error) });
    }
  };
  let rendered: ReturnType<typeof renderPrompt>;
  let skills: Skill[];
  try {
    rendered = renderPrompt(subscription.prompt, payload, message.action ? `${message.event}.${message.action}` : message.event);
  } catch (error) {
    // e.g. a payload nested too deep to print as JSON: no retry can change that.
    await giveBack();
    return finalFailure('prompt_invalid', `The prompt cannot be rendered from this payload: ${describeError(error)}`);
  }
  try {
    skills = subscription.skills.map((name) => deps.skills.load(name));
  } catch (error) {
    await giveBack();
    return finalFailure(isHookError(error) ? error.code : 'skill_invalid', isHookError(error) ? error.message : describeError(error));
  }
  await writer.save({ prompt: rendered.text, warnings: rendered.warnings });
  let refusal: string | undefined;
  try {
    refusal = await budgetRefusal(deps.counters, deps.config.agent, subscription, deps.clock.now());
  } catch (error) {
    return retryLater(isHookError(error) ? error.code : 'unavailable', `The budget counters cannot be read: ${describeError(error)}`);
  }
  if (refusal) {
    logger.warn('over budget: the agent was not called', { reason: refusal });
    await giveBack();
    await writer.save({ status: 'over_budget', error: { code: 'over_budget', message: refusal }, timings: { ...writer.current.timings, total_ms: deps.clock.now() - started } });
    return { kind: 'ack', status: 'over_budget' };
  }
  const agentStart = deps.clock.now();
  const model = subscription.model ?? deps.config.agent.model;
  try {
    const result = await (subscription.model && deps.agentFor ? deps.agentFor(subscription.model) : deps.agent).run({
      system: systemPrompt(skills), prompt: fencePrompt(rendered), rendered: rendered.text,
      allowedTools: [...new Set(skills.flatMap((s) => s.tools))], timeoutMs: subscription.timeout_ms ?? deps.config.agent.timeout_ms, maxSteps: subscription.max_steps ?? deps.config.agent.max_steps,
      message, payload, logger, ...((subscription.max_tokens ?? deps.config.agent.max_tokens) ? { maxTokens: subscription.max_tokens ?? deps.config.agent.max_tokens } : {}),
    });
    const reply = postableReply(result.text, deps.config);
    const warnings = [...rendered.warnings, ...result.refusedTools.map((t) => `tool '${t}' refused: no attached skill declares it`)];
    if (result.unknownStop !== undefined) {
      // The reply (it may be complete) carries a note saying so (agent/loop.ts); the record and the log name the reason.
      const stopReason = redactSecrets(result.unknownStop, secretsOf(deps.config));
      warnings.push(`the model's reply ended for a reason hookagent does not know (${stopReason}): it may be incomplete`);
      logger.warn("the model's reply ended for a reason hookagent does not know; it may be incomplete", { provider: result.run?.usage.provider, model: result.run?.usage.model, stop_reason: stopReason });
    }
    // The full reply is delivered; the record keeps what fits.
    await writer.save({ reply, warnings, ...(model ? { model } : {}), timings: { ...writer.current.timings, agent_ms: deps.clock.now() - agentStart }, error: undefined, ...await recordAgentRun(deps, message, recordableRun(result.run, deps.config, reply), writer.current.usage, writer.current.transcript_ref) });
    return { reply };
  } catch (error) {
    const run = recordableRun(runOf(error), deps.config);
    if (run) await writer.save({ timings: { ...writer.current.timings, agent_ms: deps.clock.now() - agentStart }, ...await recordAgentRun(deps, message, run, writer.current.usage, writer.current.transcript_ref) });
    const code = isHookError(error) ? error.code : 'agent_failed';
    const text = isHookError(error) ? error.message : describeError(error);
    return isHookError(error) && error.retryable ? retryLater(code, text, error.retryAfterMs) : finalFailure(code, text);
  }
}
