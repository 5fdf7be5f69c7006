/**
 * The delivery targets: each module describes itself (delivery/target.ts `TargetModule`);
 * this list is the one place they are registered. `TARGET_KINDS`, `subscribe`'s config
 * check and the worker's targets all come from it.
 */
import type { Config } from '../config/types';
import type { Subscription } from '../types';
import { eventOrigin } from '../events/known';
import { postCodehostComment } from './codehost-comment';
import { replyParts, type ReplyAdditions } from './findings';
import { logTarget } from './log-target';
import { ignoredChannel, postSlack, slackWebhookOnly } from './slack';
import type { DeliveryOutcome, DeliveryRequest, DeliveryTarget, TargetHttp, TargetModule, TargetStores } from './target';
import { sendTelegram } from './telegram';

/** For the log and chat posts: the reply alone, and its findings and unread note, which the target appends after formatting and cutting it. */
const apart = (request: DeliveryRequest): [DeliveryRequest, ReplyAdditions] => {
  const { text, findings, unread } = replyParts(request.reply, request.subscription);
  return [{ ...request, reply: text }, unread === undefined ? { findings } : { findings, unread }];
};

const unconfigured = (key: string): DeliveryOutcome => ({ status: 'failed', retryable: false, code: 'target_unconfigured', message: `${key} is not configured in config.yaml` });

const logModule = {
  kind: 'log',
  missingConfig: (): string | undefined => undefined,
  create: (): DeliveryTarget => ({ kind: 'log', deliver: async (request) => logTarget.deliver(...apart(request)) }),
} as const satisfies TargetModule<'log'>;

const codehostModule = {
  kind: 'codehost_comment',
  missingConfig: (config: Config, events: readonly string[]) => {
    const hosts = config.delivery.codehost;
    if (hosts.github || hosts.gitlab) return undefined;
    const origins = new Set(events.map(eventOrigin));
    return origins.has('gitlab') && !origins.has('github') ? 'delivery.codehost.gitlab' : 'delivery.codehost.github (or delivery.codehost.gitlab)';
  },
  // The host, repository/project and number come from the validated subject (events/subject.ts).
  create: (settings: Config['delivery'], http: TargetHttp, stores: TargetStores): DeliveryTarget => ({
    kind: 'codehost_comment',
    deliver: async (request) => postCodehostComment(request, settings.codehost, http, stores),
  }),
} as const satisfies TargetModule<'codehost_comment'>;

const teamchatModule = {
  kind: 'teamchat',
  missingConfig: (config: Config) => (config.delivery.teamchat ? undefined : 'delivery.teamchat'),
  create: (settings: Config['delivery'], http: TargetHttp): DeliveryTarget => ({
    kind: 'teamchat',
    unrepeatable: true,
    deliver: async (request) => {
      if (!settings.teamchat) return unconfigured('delivery.teamchat');
      const [reply, additions] = apart(request);
      return postSlack(reply, settings.teamchat, http, additions);
    },
  }),
} as const satisfies TargetModule<'teamchat'>;

const messengerModule = {
  kind: 'messenger',
  missingConfig: (config: Config) => (config.delivery.messenger ? undefined : 'delivery.messenger'),
  create: (settings: Config['delivery'], http: TargetHttp): DeliveryTarget => ({
    kind: 'messenger',
    unrepeatable: true,
    deliver: async (request) => {
      if (!settings.messenger) return unconfigured('delivery.messenger');
      const [reply, additions] = apart(request);
      return sendTelegram(reply, settings.messenger, http, additions);
    },
  }),
} as const satisfies TargetModule<'messenger'>;

/** Every delivery target, in the order `--help` lists them: register a new one here. */
export const TARGET_MODULES = [codehostModule, teamchatModule, messengerModule, logModule] as const;

export type TargetKind = (typeof TARGET_MODULES)[number]['kind'];
export const TARGET_KINDS: readonly TargetKind[] = TARGET_MODULES.map((m) => m.kind);

/** The config key a target needs, when it is missing. */
export function missingTargetConfig(kind: TargetKind, config: Config, events: readonly string[]): string | undefined {
  return TARGET_MODULES.find((m) => m.kind === kind)?.missingConfig(config, events);
}

/** What a subscription asks that its targets cannot do with this config (`subscribe`/`update` warn; the delivery says it too). */
export function ignoredTargetSettings(subscription: Pick<Subscription, 'deliver' | 'channel'>, config: Config): string[] {
  const teamchat = config.delivery.teamchat;
  const channelIgnored = subscription.channel && subscription.deliver.includes('teamchat') && teamchat && slackWebhookOnly(teamchat);
  return channelIgnored ? [ignoredChannel(subscription.channel as string)] : [];
}

/**
 * `sleep` and `maxWaitMs` (the longest rate-limit wait honoured in-process; longer waits
 * go back to the queue as retryable failures with `retryAfterMs`) are for tests.
 * `stores.leases`: the worker's LeaseStore, so sticky comments are serialised per subject.
 */
export function createDeliveryTargets(settings: Config['delivery'], sleep?: (ms: number) => Promise<void>, maxWaitMs?: number, stores: TargetStores = {}): Record<TargetKind, DeliveryTarget> {
  const http: TargetHttp = { timeoutMs: settings.timeout_ms, ...(sleep ? { sleep } : {}), ...(maxWaitMs === undefined ? {} : { maxWaitMs }) };
  return Object.fromEntries(TARGET_MODULES.map((m) => [m.kind, m.create(settings, http, stores)])) as Record<TargetKind, DeliveryTarget>;
}
