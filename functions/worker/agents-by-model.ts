/** One agent per model a subscription names (`--model`), built like the configured one and kept. */
import type { Agent } from '../core/agent/agent';
import type { Config } from '../core/config/types';
import { createAgent } from './agent-factory';

export function agentsByModel(settings: Config['agent'], delivery: Config['delivery'], region: string | undefined): (model: string) => Agent {
  const agents = new Map<string, Agent>();
  return (model) => {
    let agent = agents.get(model);
    if (!agent) {
      agent = createAgent({ ...settings, model }, delivery, region);
      agents.set(model, agent);
    }
    return agent;
  };
}
