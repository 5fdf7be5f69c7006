/** The configured agent provider. */
import type { Config } from '../core/config/types';
import { echoAgent, type Agent } from '../core/agent/agent';
import { HookError } from '../core/errors';

export function createAgent(settings: Config['agent'], _region: string | undefined): Agent {
  if (settings.provider === 'echo') return echoAgent;
  return {
    run: async () => {
      throw new HookError('provider_unavailable', `The '${settings.provider}' agent provider is not available in this build; use provider: echo`);
    },
  };
}
