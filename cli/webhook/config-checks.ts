/**
 * What `subscribe`/`update` say about their event filters and targets beyond the
 * subscription itself: alert senders' event types (known by payload shape, hunt 5 D7) and
 * target credentials no HTTP header can carry (hunt 5 D3).
 */
import type { Config } from '../../functions/core/config/types';
import { unsendable, valueAt } from '../../functions/core/config/header-safe';
import { referencedNames, substitute } from '../../functions/core/config/references';
import { ALERT_SENDER_ACTIONS } from '../../functions/core/events/alert-senders';
import { splitSource, splitType } from '../../functions/core/events/filters';
import { loadDotEnv } from '../local/first-run';

/** What each alert sender sends: Alertmanager and Grafana `alert.firing`/`alert.resolved`, PagerDuty `incident.<verb>`. */
const ALERT_ACTIONS = ALERT_SENDER_ACTIONS;

/**
 * Filters naming an alert sender's type (`alert.firing`, `incident.triggered`, `custom:alert`)
 * are set apart: they are not "unknown names"; an `alert` action those senders never send is named.
 */
export function alertSenderFilters(events: readonly string[]): { others: string[]; warnings: string[] } {
  const others: string[] = [];
  const warnings: string[] = [];
  for (const filter of events) {
    const { source, rest } = splitSource(filter);
    const [name = rest, action] = splitType(rest);
    if ((source !== undefined && source !== 'custom') || !(name in ALERT_ACTIONS)) {
      others.push(filter);
      continue;
    }
    const actions = ALERT_ACTIONS[name];
    if (action !== undefined && action !== '*' && actions && !actions.includes(action)) {
      warnings.push(`'${filter}': Alertmanager and Grafana send ${actions.map((a) => `${name}.${a}`).join(' and ')}; '${filter}' matches only a sender that names this type itself (X-Event-Type or the payload's event_type)`);
    }
  }
  return { others, warnings };
}

/** The credential keys each target sends as a header. */
const TARGET_KEYS: Record<string, readonly string[]> = {
  codehost_comment: ['delivery.codehost.github.token', 'delivery.codehost.gitlab.token'],
  teamchat: ['delivery.teamchat.bot_token'],
};

/**
 * `key: what is wrong` for each credential of these targets whose value, resolved as serve
 * resolves it (the environment, then `.env`), cannot be sent in an HTTP header.
 */
export function unsendableCredentials(config: Config, configDir: string, targets: readonly string[]): string[] {
  const environment: NodeJS.ProcessEnv = { ...process.env };
  loadDotEnv(configDir, environment);
  const problems: string[] = [];
  for (const path of new Set(targets.flatMap((t) => TARGET_KEYS[t] ?? []))) {
    const written = valueAt(config, path);
    if (typeof written !== 'string') continue;
    const values = new Map(referencedNames(written).flatMap((n) => (environment[n] ? [[n, environment[n] as string] as const] : [])));
    // A variable with no value is serve's "not set" error, said when it starts.
    if (values.size < referencedNames(written).length) continue;
    const problem = unsendable(written, substitute(written, values));
    if (problem) problems.push(`${path}: ${problem}`);
  }
  return problems;
}
