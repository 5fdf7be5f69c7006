/** The delivery targets by kind, over the resolved `delivery` configuration. */
import type { Config } from '../config/types';
import type { TargetKind } from '../types';
import { postGithubComment } from './codehost-github';
import { postGitlabComment } from './codehost-gitlab';
import type { HttpOptions } from './http';
import { logTarget } from './log-target';
import { postSlack } from './slack';
import type { DeliveryOutcome, DeliveryRequest, DeliveryTarget } from './target';
import { sendTelegram } from './telegram';

const unconfigured = (key: string): DeliveryOutcome => ({ status: 'failed', retryable: false, code: 'target_unconfigured', message: `${key} is not configured in config.yaml` });

/** GitHub or GitLab: the endpoint the event came in through, else the payload's shape. */
function codehostOf(request: DeliveryRequest): 'github' | 'gitlab' | undefined {
  if (request.message.source !== 'custom') return request.message.source;
  if (typeof request.payload.object_kind === 'string') return 'gitlab';
  if (request.payload.repository && typeof (request.payload.repository as { full_name?: unknown }).full_name === 'string') return 'github';
  return undefined;
}

export function createDeliveryTargets(settings: Config['delivery'], sleep?: (ms: number) => Promise<void>): Record<TargetKind, DeliveryTarget> {
  const http: Omit<HttpOptions, 'api'> = { timeoutMs: settings.timeout_ms, ...(sleep ? { sleep } : {}) };
  return {
    log: logTarget,
    codehost_comment: {
      kind: 'codehost_comment',
      async deliver(request) {
        const host = codehostOf(request);
        if (!host) return { status: 'failed', retryable: false, code: 'nothing_to_comment', message: 'This event comes from no code host: nothing to comment on' };
        const hostSettings = settings.codehost[host];
        if (!hostSettings) return unconfigured(`delivery.codehost.${host}`);
        return host === 'github' ? postGithubComment(request, hostSettings, http) : postGitlabComment(request, hostSettings, http);
      },
    },
    teamchat: {
      kind: 'teamchat',
      deliver: async (request) => (settings.teamchat ? postSlack(request, settings.teamchat, http) : unconfigured('delivery.teamchat')),
    },
    messenger: {
      kind: 'messenger',
      deliver: async (request) => (settings.messenger ? sendTelegram(request, settings.messenger, http) : unconfigured('delivery.messenger')),
    },
  };
}
