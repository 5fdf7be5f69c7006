/** A provider-neutral conversation: what the tool loop keeps and each provider translates. */
export interface ToolCall {
  id: string;
  name: string;
  /** Parsed arguments; a model that sends malformed JSON gets an error result. */
  input: unknown;
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

export interface ProviderTurn {
  text: string;
  toolCalls: ToolCall[];
}

/** One model call: the conversation so far in, the model's next turn out. */
export interface ChatProvider {
  turn(system: string, conversation: Turn[], tools: ToolSpec[], signal: AbortSignal): Promise<ProviderTurn>;
}
