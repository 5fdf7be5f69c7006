/** Each provider's stop reasons, normalised; the token-limit field per OpenAI-compatible server. */
import { anthropicStop } from '../../functions/core/agent/anthropic';
import { maxTokensField, openAiStop } from '../../functions/core/agent/openai';
import { bedrockStop } from '../../functions/aws/bedrock-provider';

test.each([
  ['stop', 'end'], ['tool_calls', 'tool_use'], ['function_call', 'tool_use'], ['length', 'max_tokens'], ['model_length', 'max_tokens'], ['content_filter', 'content_filter'], [null, undefined], ['weird', 'other'],
])('OpenAI finish_reason %p → %p', (reason, stop) => expect(openAiStop(reason)).toBe(stop));

test.each([
  ['end_turn', 'end'], ['stop_sequence', 'end'], ['pause_turn', 'end'], ['tool_use', 'tool_use'], ['max_tokens', 'max_tokens'],
  ['model_context_window_exceeded', 'max_tokens'], ['refusal', 'content_filter'], [undefined, undefined],
])('Anthropic stop_reason %p → %p', (reason, stop) => expect(anthropicStop(reason)).toBe(stop));

test.each([
  ['end_turn', 'end'], ['stop_sequence', 'end'], ['tool_use', 'tool_use'], ['max_tokens', 'max_tokens'], ['content_filtered', 'content_filter'],
  ['guardrail_intervened', 'content_filter'], ['malformed_tool_use', 'other'], [undefined, undefined],
])('Bedrock stopReason %p → %p', (reason, stop) => expect(bedrockStop(reason)).toBe(stop));

test.each([
  ['https://api.openai.com/v1', 'max_completion_tokens'], ['https://openrouter.ai/api/v1', 'max_tokens'],
  ['http://localhost:11434/v1', 'max_tokens'], ['https://api.openai.com.evil.example/v1', 'max_tokens'],
])('the token limit for %s is sent as %s', (url, field) => expect(maxTokensField(url)).toBe(field));
