/**
 * The tool-use loop: ask the model, run the tools it calls (only those the subscription's
 * skills declare), send the results back, until it answers with text, bounded by
 * `agent.max_steps` rounds and `agent.timeout`.
 *
 * A reply is only returned when it deserves to be posted: an empty reply
 * (`agent_reply_empty`), one refused by a content filter (`agent_reply_filtered`) or one cut
 * at the token limit (`agent_reply_truncated`, after one retry asking for a shorter answer)
 * is a permanent failure. Usage and transcript are recorded on the reply, or on the error.
 * An answer that ended for a reason hookagent does not know (`other`) may be complete (a
 * server may name the end its own way), so it is returned, with a note under it that says
 * so and names the reason.
 */
import { HookError, isHookError } from '../errors';
import type { Agent, AgentReply, AgentRequest } from './agent';
import { spentTurnOf, type ChatProvider, type ToolResult, type Turn, type TurnOptions } from './conversation';
import { RunRecorder, capText, withRun } from './run-record';
import { turnUsage } from './estimate';
import { fenceClose, fenceOpen, fenceText, newFenceToken } from './fence';
import { withFindings, type Finding } from '../delivery/findings';
import { replyClosers } from '../delivery/mentions';
import { isSilent } from './silent';
import { capToolOutput, type RunReads, type Tool, type ToolContext } from './tools';

export interface LoopOptions {
  provider: ChatProvider;
  tools: Record<string, Tool>;
  delivery: ToolContext['delivery'];
}

/** Sent once after a reply cut at the token limit. */
export const SHORTER_PLEASE = 'Your previous reply was cut off at the output token limit. Write the complete answer again, much shorter (well within the limit), without calling tools.';

export async function runToolLoop(request: AgentRequest, options: LoopOptions): Promise<AgentReply> {
  const signal = AbortSignal.timeout(request.timeoutMs);
  const deadline = Date.now() + request.timeoutMs;
  const offered = request.allowedTools.flatMap((name) => (options.tools[name] ? [options.tools[name]] : []));
  const specs = offered.map(({ name, description, parameters }) => ({ name, description, parameters }));
  const conversation: Turn[] = [{ role: 'user', text: request.prompt }];
  const refusedTools: string[] = [];
  const recorder = new RunRecorder(options.provider.name ?? 'model', options.provider.model, request.system, request.prompt);
  const turnOptions: TurnOptions = { ...(request.maxTokens ? { maxTokens: request.maxTokens } : {}), deadline };
  let retriedShorter = false;
  // Tool results are outside text: fenced with a token of this run (fence.ts).
  const fence = newFenceToken([request.prompt]);
  // record_finding collects here; the findings travel with the reply to the code-host delivery.
  const findings: Finding[] = [];
  // get_change_diff calls: when every one failed, the reply says so (it is no review of the diff).
  const diffReads = { ok: 0, errors: [] as string[] };
  // The head the tools read when the event names none: the sticky footer names it.
  const reads: RunReads = {};
  try {
    for (let step = 1; step <= request.maxSteps; step++) {
      // Tools stay offered on the shorter retry: Bedrock refuses toolUse blocks without a toolConfig.
      const turn = await options.provider.turn(request.system, conversation, specs, signal, turnOptions);
      // A provider that reports no usage (some Ollama/vLLM setups) is not free: estimated, and marked so.
      const recorded = recorder.turn(turn.text, turn.stop, turnUsage(request.system, conversation, specs, turn), turn.unknownStop);
      if (turn.stop === 'content_filter') {
        const said = turn.text.trim() ? ` (the model said: "${capText(turn.text.trim(), 300)}")` : '';
        throw new HookError('agent_reply_filtered', `The model's reply was refused by the provider's content filter or the model declined (${options.provider.name ?? 'model'}); nothing was posted${said}`);
      }
      if (turn.stop === 'max_tokens') {
        if (retriedShorter) {
          throw new HookError('agent_reply_truncated', `The model's reply was cut at the token limit${request.maxTokens ? ` (${request.maxTokens}: the subscription's --max-tokens, else agent.max_tokens)` : ''}, also when asked to be shorter; nothing was posted`);
        }
        // One more call, beyond max_steps: the cut reply (and any half-written tool call) is dropped.
        retriedShorter = true;
        recorder.transcript.retried_shorter = true;
        conversation.push({ role: 'assistant', text: turn.text.trim() ? turn.text : '…', toolCalls: [] }, { role: 'user', text: SHORTER_PLEASE });
        step -= 1;
        continue;
      }
      if (turn.toolCalls.length === 0) {
        if (turn.text.trim() === '') throw new HookError('agent_reply_empty', 'The model answered with an empty reply; nothing was posted');
        const unread = diffReads.ok === 0 && diffReads.errors.length > 0 ? `get_change_diff failed: ${diffReads.errors.at(-1)}` : undefined;
        const readHead = diffReads.ok > 0 && reads.head ? await reads.head.catch(() => undefined) : undefined;
        const unknownStop = turn.stop === 'other' ? turn.unknownStop ?? '(not named by the provider)' : undefined;
        // A [SILENT] answer posts nothing, so it gets no note (which would end it as its last line).
        const answer = turn.stop === 'other' && !isSilent(turn.text) ? withUnknownStopNote(turn.text, turn.unknownStop) : turn.text;
        const text = withFindings(answer, findings, unread, readHead);
        return { text, steps: recorder.usage.steps, refusedTools, run: recorder.snapshot(text), ...(unknownStop !== undefined ? { unknownStop } : {}) };
      }
      conversation.push({ role: 'assistant', text: turn.text, toolCalls: turn.toolCalls });
      const results: ToolResult[] = [];
      for (const call of turn.toolCalls) {
        const tool = request.allowedTools.includes(call.name) ? options.tools[call.name] : undefined;
        const started = Date.now();
        let result: ToolResult;
        if (!tool) {
          refusedTools.push(call.name);
          result = { id: call.id, name: call.name, isError: true, content: `Tool '${call.name}' is not available for this task.` };
        } else if (call.inputError) {
          // Not run on a made-up input: a cut `{"path": …` would otherwise read as "no path".
          result = { id: call.id, name: call.name, isError: true, content: call.inputError };
        } else {
          try {
            const context: ToolContext = { message: request.message, payload: request.payload, delivery: options.delivery, signal, findings, reads, ...(request.logger ? { logger: request.logger } : {}) };
            result = { id: call.id, name: call.name, isError: false, content: fenceText(capToolOutput(await untilAborted(tool.run(call.input, context), signal)), fence) };
          } catch (error) {
            if (signal.aborted) {
              // Shown in the transcript: the run ended while this tool was still working.
              recorder.toolCall(recorded, call.name, call.input, false, Date.now() - started, `(cut off: the agent's time limit of ${request.timeoutMs / 1000}s ran out while this tool was working)`);
              throw error;
            }
            result = { id: call.id, name: call.name, isError: true, content: fenceText(capToolOutput(isHookError(error) ? error.message : String(error)), fence) };
          }
        }
        if (call.name === 'get_change_diff' && tool) {
          if (result.isError) diffReads.errors.push(call.inputError ? 'arguments not valid JSON' : resultError(result.content, fence));
          else diffReads.ok += 1;
        }
        results.push(result);
        recorder.toolCall(recorded, call.name, call.input, !result.isError, Date.now() - started, result.content);
      }
      conversation.push({ role: 'tool', results });
    }
  } catch (error) {
    // A call answered and billed, then failed (`conversation` is as it was sent): one step, counted as any answered call.
    const spent = spentTurnOf(error);
    if (spent) recorder.turn('', 'other', turnUsage(request.system, conversation, specs, spent));
    if (signal.aborted) throw withRun(new HookError('agent_timeout', `The agent did not finish within ${request.timeoutMs / 1000}s (the subscription's --timeout, else agent.timeout)`, { retryable: true }), recorder.snapshot());
    throw withRun(error, recorder.snapshot());
  }
  throw withRun(new HookError('agent_max_steps', `The agent used all ${request.maxSteps} tool rounds (the subscription's --max-steps, else agent.max_steps) without answering`), recorder.snapshot());
}

/**
 * A tool's result, or the run's timeout, whichever comes first. The tools pass the signal
 * on (the code-host clients abort the request in flight and end a rate-limit wait, http_get
 * aborts its fetch), so their work stops too; this keeps any tool that still finishes late
 * from holding the run past `agent.timeout`. A late result is dropped.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * `text` with the note that its end is one hookagent does not know (`shown`: stopReasonText's,
 * undefined when the provider named none), after whatever the text left open (an unclosed
 * fence would swallow it). The reason sits in a code span it can neither end (no backtick)
 * nor leave (one line), so the provider's text is never read as markup or mentions.
 */
function withUnknownStopNote(text: string, shown: string | undefined): string {
  const named = shown === undefined ? '' : ` (\`${shown.replace(/`/g, "'")}\`)`;
  return `${text}${replyClosers(text)}\n\n_The model's reply above ended for a reason hookagent does not know${named}, so it may be incomplete._`;
}

/** A tool error's text without its fence, short. */
function resultError(content: string, fence: string): string {
  return content.split(fenceOpen(fence)).join('').split(fenceClose(fence)).join('').trim().slice(0, 300);
}

/** An Agent over a provider and a set of tools. */
export function loopAgent(provider: ChatProvider, tools: Record<string, Tool>, delivery: ToolContext['delivery']): Agent {
  return { run: (request) => runToolLoop(request, { provider, tools, delivery }) };
}
