/** The delivery targets by kind, over the resolved `delivery` configuration. */
import type { Config } from '../config/types';
import type { TargetKind } from '../types';
import { postCodehostComment } from './codehost-comment';
import { flattenFindings } from './findings';
import type { HttpOptions } from './http';
import { logTarget } from './log-target';
import { postSlack } from './slack';
import type { DeliveryOutcome, DeliveryRequest, DeliveryTarget } from './target';
import { sendTelegram } from './telegram';

const unconfigured = (key: string): DeliveryOutcome => ({ status: 'failed', retryable: false, code: 'target_unconfigured', message: `${key} is not configured in config.yaml` });

/**
 * `sleep` and `maxWaitMs` (the longest rate-limit wait honoured in-process; longer waits
 * go back to the queue as retryable failures with `retryAfterMs`) are for tests.
 */
export function createDeliveryTargets(settings: Config['delivery'], sleep?: (ms: number) => Promise<void>, maxWaitMs?: number): Record<TargetKind, DeliveryTarget> {
  const http: Omit<HttpOptions, 'api'> = { timeoutMs: settings.timeout_ms, ...(sleep ? { sleep } : {}), ...(maxWaitMs === undefined ? {} : { maxWaitMs }) };
  return {
    log: { kind: 'log', deliver: async (request) => logTarget.deliver({ ...request, reply: flattenFindings(request.reply) }) },
    codehost_comment: {
      kind: 'codehost_comment',
      // The host, repository/project and number come from the validated subject (events/subject.ts).
      deliver: async (request) => postCodehostComment(request, settings.codehost, http),
    },
    teamchat: {
      kind: 'teamchat',
      deliver: async (request) => (settings.teamchat ? postSlack({ ...request, reply: flattenFindings(request.reply) }, settings.teamchat, http) : unconfigured('delivery.teamchat')),
    },
    messenger: {
      kind: 'messenger',
      deliver: async (request) => (settings.messenger ? sendTelegram({ ...request, reply: flattenFindings(request.reply) }, settings.messenger, http) : unconfigured('delivery.messenger')),
    },
  };
}
