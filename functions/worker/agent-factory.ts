/** The configured agent provider: echo, or a model behind the tool-use loop. */
import type { Config } from '../core/config/types';
import { echoAgent, type Agent } from '../core/agent/agent';
import { loopAgent } from '../core/agent/loop';
import { OPENAI_DEFAULT_BASE_URL, openAiProvider } from '../core/agent/openai';
import { BUILTIN_TOOLS } from '../core/agent/tools';
import { bedrockClient, bedrockProvider } from '../aws/bedrock-provider';

export function createAgent(settings: Config['agent'], delivery: Config['delivery'], region: string | undefined): Agent {
  switch (settings.provider) {
    case 'echo':
      return echoAgent;
    case 'openai':
      return loopAgent(openAiProvider({
        baseUrl: settings.base_url ?? OPENAI_DEFAULT_BASE_URL, model: settings.model ?? '', ...(settings.api_key ? { apiKey: settings.api_key } : {}),
      }), BUILTIN_TOOLS, delivery);
    case 'bedrock':
      return loopAgent(bedrockProvider(bedrockClient(settings.region ?? region), settings.model ?? ''), BUILTIN_TOOLS, delivery);
  }
}
