/** The configured agent provider: echo, or a model behind the tool-use loop. */
import type { Config } from '../core/config/types';
import { echoAgent, type Agent } from '../core/agent/agent';
import { ANTHROPIC_DEFAULT_BASE_URL, anthropicProvider } from '../core/agent/anthropic';
import { httpGetTool } from '../core/agent/http-get';
import { loopAgent } from '../core/agent/loop';
import { OPENAI_DEFAULT_BASE_URL, openAiProvider } from '../core/agent/openai';
import { BUILTIN_TOOLS } from '../core/agent/tools';
import type { ChatProvider } from '../core/agent/conversation';

export function createAgent(settings: Config['agent'], delivery: Config['delivery'], region: string | undefined): Agent {
  const tools = { ...BUILTIN_TOOLS, http_get: httpGetTool(settings.http) };
  switch (settings.provider) {
    case 'echo':
      return echoAgent;
    case 'openai':
      return loopAgent(openAiProvider({
        baseUrl: settings.base_url ?? OPENAI_DEFAULT_BASE_URL, model: settings.model ?? '', ...(settings.api_key ? { apiKey: settings.api_key } : {}),
      }), tools, delivery);
    case 'anthropic':
      return loopAgent(anthropicProvider({
        baseUrl: settings.base_url ?? ANTHROPIC_DEFAULT_BASE_URL, model: settings.model ?? '', ...(settings.api_key ? { apiKey: settings.api_key } : {}),
      }), tools, delivery);
    case 'bedrock':
      return loopAgent(bedrockOnFirstTurn(settings.region ?? region, settings.model ?? ''), tools, delivery);
  }
}

/**
 * Bedrock's provider, its SDK loaded at the first turn (`import()`): the CLI's dry run and
 * serve with another provider never load it.
 */
function bedrockOnFirstTurn(region: string | undefined, model: string): ChatProvider {
  let loaded: Promise<ChatProvider> | undefined;
  const provider = () => (loaded ??= import('../aws/bedrock-provider').then((m) => m.bedrockProvider(m.bedrockClient(region), model)));
  return { name: 'bedrock', model, turn: async (...args) => (await provider()).turn(...args) };
}
