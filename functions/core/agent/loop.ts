/**
 * The tool-use loop: ask the model, run the tools it calls (only those the subscription's
 * skills declare), send the results back, until it answers with text, bounded by
 * `agent.max_steps` rounds and `agent.timeout`.
 */
import { HookError, isHookError } from '../errors';
import type { Agent, AgentReply, AgentRequest } from './agent';
import type { ChatProvider, ToolResult, Turn } from './conversation';
import { withFindings, type Finding } from '../delivery/findings';
import { capToolOutput, type Tool, type ToolContext } from './tools';

export interface LoopOptions {
  provider: ChatProvider;
  tools: Record<string, Tool>;
  delivery: ToolContext['delivery'];
}

export async function runToolLoop(request: AgentRequest, options: LoopOptions): Promise<AgentReply> {
  const signal = AbortSignal.timeout(request.timeoutMs);
  const offered = request.allowedTools.flatMap((name) => (options.tools[name] ? [options.tools[name]] : []));
  const specs = offered.map(({ name, description, parameters }) => ({ name, description, parameters }));
  const conversation: Turn[] = [{ role: 'user', text: request.prompt }];
  const refusedTools: string[] = [];
  const findings: Finding[] = [];
  try {
    for (let step = 1; step <= request.maxSteps; step++) {
      const turn = await options.provider.turn(request.system, conversation, specs, signal);
      if (turn.toolCalls.length === 0) return { text: withFindings(turn.text, findings), steps: step, refusedTools };
      conversation.push({ role: 'assistant', text: turn.text, toolCalls: turn.toolCalls });
      const results: ToolResult[] = [];
      for (const call of turn.toolCalls) {
        const tool = request.allowedTools.includes(call.name) ? options.tools[call.name] : undefined;
        if (!tool) {
          refusedTools.push(call.name);
          results.push({ id: call.id, name: call.name, isError: true, content: `Tool '${call.name}' is not available for this task.` });
          continue;
        }
        try {
          const context: ToolContext = { message: request.message, payload: request.payload, delivery: options.delivery, signal, findings };
          results.push({ id: call.id, name: call.name, isError: false, content: capToolOutput(await tool.run(call.input, context)) });
        } catch (error) {
          if (signal.aborted) throw error;
          results.push({ id: call.id, name: call.name, isError: true, content: capToolOutput(isHookError(error) ? error.message : String(error)) });
        }
      }
      conversation.push({ role: 'tool', results });
    }
  } catch (error) {
    if (signal.aborted) throw new HookError('agent_timeout', `The agent did not finish within ${request.timeoutMs / 1000}s (agent.timeout)`, { retryable: true });
    throw error;
  }
  throw new HookError('agent_max_steps', `The agent used all ${request.maxSteps} tool rounds (agent.max_steps) without answering`);
}

/** An Agent over a provider and a set of tools. */
export function loopAgent(provider: ChatProvider, tools: Record<string, Tool>, delivery: ToolContext['delivery']): Agent {
  return { run: (request) => runToolLoop(request, { provider, tools, delivery }) };
}
