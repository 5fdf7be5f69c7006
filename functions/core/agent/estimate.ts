/**
 * Token counts for a model call whose provider reported none (an answer, or a reply it
 * failed or interrupted after the model started: billed all the same). Some OpenAI-compatible
 * servers (Ollama and vLLM in some setups) answer without `usage`, or with zeros; counted
 * as 0, such runs would look free and never trip a daily budget. The estimate is the
 * common rule of thumb for English text and code: about 4 characters a token
 * (`CHARS_PER_TOKEN`), rounded up, over
 * - in: the system prompt, every message sent (text, tool calls' names and JSON arguments,
 *   tool results) and the tool specs (name, description, JSON Schema) offered;
 * - out: the reply's text and its tool calls' names and JSON arguments.
 * It is marked `estimated` wherever usage is recorded or shown: not a provider's figure.
 */
import type { ProviderTurn, ToolSpec, Turn, TurnUsage } from './conversation';

export const CHARS_PER_TOKEN = 4;

const tokens = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

const callChars = (calls: ReadonlyArray<{ name: string; input: unknown }>): number =>
  calls.reduce((n, c) => n + c.name.length + JSON.stringify(c.input ?? {}).length, 0);

function turnChars(turn: Turn): number {
  if (turn.role === 'user') return turn.text.length;
  if (turn.role === 'assistant') return turn.text.length + callChars(turn.toolCalls);
  return turn.results.reduce((n, r) => n + r.content.length, 0);
}

/** True when the provider's usage counts something: absent, or all zeros, is no usage. */
export function reportedUsage(usage: TurnUsage | undefined): usage is TurnUsage {
  return usage !== undefined && usage.input + usage.output + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0) > 0;
}

/** The usage one call counts: the provider's when it reported one, else the estimate (`estimateTurnUsage`). */
export function turnUsage(system: string, conversation: readonly Turn[], tools: readonly ToolSpec[], turn: Pick<ProviderTurn, 'text' | 'toolCalls' | 'usage'>): TurnUsage {
  return reportedUsage(turn.usage) ? turn.usage : estimateTurnUsage(system, conversation, tools, turn);
}

/** The estimated usage of one call: `conversation` and `tools` as sent, `turn` as answered. */
export function estimateTurnUsage(system: string, conversation: readonly Turn[], tools: readonly ToolSpec[], turn: Pick<ProviderTurn, 'text' | 'toolCalls'>): TurnUsage {
  const sent = system.length + conversation.reduce((n, t) => n + turnChars(t), 0) + (tools.length > 0 ? JSON.stringify(tools).length : 0);
  return { input: tokens(sent), output: tokens(turn.text.length + callChars(turn.toolCalls)), estimated: true };
}
