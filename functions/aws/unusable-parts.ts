/**
 * The worker's stand-ins for a part of the configuration whose secret is not set
 * (resolve-parts.ts): the agent, or a delivery target, fails with that reason, retryably,
 * so an event needing it is retried (and succeeds once the secret is set and the function
 * has re-read its secrets) and otherwise ends `failed` with the reason; events that need
 * other parts run as usual.
 */
import type { Agent } from '../core/agent/agent';
import type { DeliveryTarget } from '../core/delivery/target';
import { HookError } from '../core/errors';

/** The config parts the worker can do without, one at a time (resolveParts). */
export const WORKER_PARTS = [['agent'], ['delivery', 'teamchat'], ['delivery', 'messenger'], ['delivery', 'codehost', 'github'], ['delivery', 'codehost', 'gitlab']] as const;

const unusable = (reason: string) => `${reason} (the secret is read again within 5 minutes of being set)`;

export function unusableAgent(reason: string): Agent {
  return { run: async () => { throw new HookError('secret_not_found', unusable(reason), { retryable: true }); } };
}

/** `targets` with those whose settings are unusable failing with the reason (codehost: per host, by the event's source). */
export function withUnusableTargets<T extends Record<string, DeliveryTarget>>(targets: T, unresolved: ReadonlyMap<string, string>): T {
  const reasonFor = (kind: string, source: string): string | undefined => {
    if (kind === 'teamchat' || kind === 'messenger') return unresolved.get(`delivery.${kind}`);
    if (kind === 'codehost_comment') return unresolved.get(`delivery.codehost.${source}`);
    return undefined;
  };
  const wrapped: Record<string, DeliveryTarget> = {};
  for (const [kind, target] of Object.entries(targets)) {
    wrapped[kind] = {
      kind: target.kind,
      deliver: async (request) => {
        const reason = reasonFor(kind, request.message.source);
        return reason ? { status: 'failed', retryable: true, code: 'secret_not_found', message: unusable(reason) } : target.deliver(request);
      },
    };
  }
  return unresolved.size === 0 ? targets : (wrapped as T);
}
