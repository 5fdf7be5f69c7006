/**
 * Which event `webhook test --send` and `test --dry-run` take a sample of, and where it
 * cannot go (hunt 8 D1). A `*` or `github:*` filter names no event, and a `github:` or
 * `gitlab:` filter never matches on the subscription's custom endpoint (what arrives there
 * is a `custom` event): sending such a subscription's sample there, because the host's
 * secret was unset or the wildcard was skipped, posted what it never takes, and the CLI
 * then blamed the filters.
 */
import type { Config } from '../../functions/core/config/types';
import { HookError } from '../../functions/core/errors';
import type { Payload } from '../../functions/core/events/classify';
import { splitSource } from '../../functions/core/events/filters';
import { receivesCustom, secretWarnings } from '../setup-hints';
import { concreteFilter, filterForPayload } from './preview-event';

export type Host = 'github' | 'gitlab';

/** The shipped sample a `github:*` / `gitlab:*` subscription is tested with (`--event` picks another). */
const WILDCARD_SAMPLES: Record<Host, string> = { github: 'pull_request.opened', gitlab: 'merge_request' };

export interface SampleChoice {
  /** The event sent, as a filter names it: `github:pull_request.opened`, `deploy.done`, `custom`. */
  filter: string;
  /** The filter it is judged by (`--event`, or the subscription's own, a wildcard included); none without events. */
  judgedBy?: string;
}

export interface SampleOptions {
  payload?: Payload;
  eventOption?: string;
  /** Whether a host's secret is set: a wildcard of both hosts is tested on one that answers. */
  configured?: (host: Host) => boolean;
}

const isHost = (source: string | undefined): source is Host => source === 'github' || source === 'gitlab';

/**
 * `--event` (a wildcard made concrete by `--payload`); else the filter that fits the
 * payload, as `webhook test` judges it; else the first filter naming an event; else, for
 * `*`, the custom endpoint's stub (it takes every event there); else, for `github:*` /
 * `gitlab:*` alone, a shipped sample of that host, or with a `--payload` that shows no
 * event, a refusal asking for `--event`.
 */
export function sampleChoice(events: readonly string[], options: SampleOptions = {}): SampleChoice {
  const { payload, eventOption } = options;
  if (eventOption !== undefined) return { filter: payload ? concreteFilter(eventOption, payload) : eventOption, judgedBy: eventOption };
  const fitting = payload ? filterForPayload(events, payload) : undefined;
  const concrete = fitting !== undefined && payload ? concreteFilter(fitting, payload) : undefined;
  if (concrete !== undefined && splitSource(concrete).rest !== '*') return { filter: concrete, judgedBy: fitting };
  const named = events.find((filter) => splitSource(filter).rest !== '*');
  if (named !== undefined) return { filter: named, judgedBy: named };
  const custom = events.find((filter) => receivesCustom([filter]));
  if (events.length === 0 || custom !== undefined) return { filter: 'custom', ...(custom !== undefined ? { judgedBy: custom } : {}) };
  if (payload) {
    throw new HookError('bad_option', `--payload shows no event that ${events.join(', ')} can match (GitHub names its event only in the X-GitHub-Event header): pass --event with the payload's type, e.g. --event github:pull_request`);
  }
  // Here every filter is `github:*` or `gitlab:*`: none reaches the custom endpoint.
  const hosts = events.map((filter) => splitSource(filter).source).filter(isHost);
  const host = hosts.find((h) => options.configured?.(h) ?? true) ?? hosts[0] ?? 'github';
  return { filter: `${host}:${WILDCARD_SAMPLES[host]}`, judgedBy: `${host}:*` };
}

/**
 * Whether the custom endpoint takes the sample: the filter it is judged by can match
 * there (the predicate `subscribe` and `show` leave that endpoint out by).
 */
export const customTakes = (choice: SampleChoice): boolean => receivesCustom(choice.judgedBy === undefined ? [] : [choice.judgedBy]);

/** The refusal when `host`'s secret is unset and the custom endpoint does not take the sample. */
export function secretNeeded(config: Config, name: string, events: readonly string[], choice: SampleChoice, host: Host): HookError {
  const unset = secretWarnings(config).find((warning) => warning.startsWith(`/webhooks/${host} `)) ?? `set webhooks.${host}.secret in config.yaml`;
  // Another filter of the subscription may be tested on its custom endpoint instead.
  const other = events.find((filter) => filter !== choice.judgedBy && splitSource(filter).rest !== '*' && receivesCustom([filter]));
  const instead = other !== undefined ? ` Or pass --event ${other} to test '${name}' on its custom endpoint.` : '';
  return new HookError('misconfigured', `Not sent: '${name}' takes ${choice.judgedBy ?? choice.filter} events only through /webhooks/${host} (its custom endpoint's events are custom ones, which a ${host}: filter never matches), and ${unset}.${instead}`);
}
