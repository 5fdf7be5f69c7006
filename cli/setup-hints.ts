/**
 * What a sender needs, said at the right time (issue 23): which endpoints a subscription
 * will really receive, which secret each one verifies with, and which endpoints refuse
 * everything because no secret is configured.
 */
import type { Config } from '../functions/core/config/types';
import { splitSource } from '../functions/core/events/filters';
import { eventOrigin } from '../functions/core/events/known';
import type { Subscription } from '../functions/core/types';
import { commandName } from './invocation';

export type Endpoint = 'github' | 'gitlab' | 'custom';

/** The code-host endpoints whose events a subscription's filters name (`github:`/`gitlab:` prefixes included). */
export function codehostEndpoints(events: readonly string[]): Array<'github' | 'gitlab'> {
  const found = new Set<'github' | 'gitlab'>();
  for (const filter of events) {
    if (filter === '*') {
      found.add('github');
      found.add('gitlab');
      continue;
    }
    const colon = filter.indexOf(':');
    const source = colon > 0 ? filter.slice(0, colon) : undefined;
    if (source === 'github' || source === 'gitlab') {
      found.add(source);
      continue;
    }
    if (source !== undefined) continue;
    const origin = eventOrigin(filter);
    if (origin === 'github' || origin === 'both') found.add('github');
    if (origin === 'gitlab' || origin === 'both') found.add('gitlab');
  }
  return (['github', 'gitlab'] as const).filter((e) => found.has(e));
}

/**
 * Whether the subscription's custom endpoint can deliver it anything: every event sent
 * there is a `custom` one, which only an unqualified filter (`deploy`, `push`, `*`), a
 * `custom:` one, or no events at all can match; `github:`/`gitlab:` filters never do.
 */
export function receivesCustom(events: readonly string[]): boolean {
  return events.length === 0 || events.some((filter) => {
    const source = splitSource(filter).source;
    return source === undefined || source === 'custom';
  });
}

export function hasSecret(config: Config, endpoint: 'github' | 'gitlab'): boolean {
  return (config.webhooks[endpoint]?.secret ?? []).length > 0;
}

/** Serve's start banner (and each reload): endpoints that answer 401 to everything. */
export function secretWarnings(config: Config): string[] {
  return (['github', 'gitlab'] as const).filter((e) => !hasSecret(config, e)).map((e) =>
    `/webhooks/${e} refuses every request (401): no secret is configured; set webhooks.${e}.secret in config.yaml to \${${e.toUpperCase()}_WEBHOOK_SECRET} and put that variable in .env`);
}

/**
 * How to give an endpoint its missing secret: serve reads `.env`; a deployed stage resolves
 * `${VAR}` from SSM (`secrets set`) and reads config.yaml only as deployed.
 */
function missingSecretAdvice(endpoint: 'github' | 'gitlab', name: string, field: string, deployment: { stage: string } | undefined): string {
  const variable = `${endpoint.toUpperCase()}_WEBHOOK_SECRET`;
  if (!deployment) {
    return `warning: no webhooks.${endpoint}.secret is configured, so this endpoint refuses everything (401). Uncomment it in config.yaml, put ${variable}=<a random string> in .env, and paste the same string into ${name}'s "${field}" field`;
  }
  const stage = deployment.stage;
  return `warning: no webhooks.${endpoint}.secret is configured, so stage '${stage}' refuses everything at this endpoint (401). Add webhooks.${endpoint}.secret: \${${variable}} to config.yaml, store a random string with '${commandName()} secrets set ${variable} --stage ${stage}', then npx osls deploy --stage ${stage}; paste the same string into ${name}'s "${field}" field`;
}

/**
 * The lines `subscribe` and `show` print about where to point senders and with which secret;
 * `deployment`: the AWS stage the command acts on (absent: serve on this machine).
 */
export function senderSetup(config: Config, base: string, s: Subscription, secretShown: boolean, deployment?: { stage: string }): string[] {
  const lines: string[] = [];
  for (const endpoint of codehostEndpoints(s.events)) {
    const name = endpoint === 'github' ? 'GitHub' : 'GitLab';
    const field = endpoint === 'github' ? 'Secret' : 'Secret token';
    lines.push(`  ${name}:  ${base}/webhooks/${endpoint}`);
    lines.push(hasSecret(config, endpoint)
      ? `    ${field}: the value of webhooks.${endpoint}.secret in config.yaml (not the custom endpoint's secret)`
      : `    ${missingSecretAdvice(endpoint, name, field, deployment)}`);
  }
  // Only `github:`/`gitlab:` filters: the custom endpoint would answer "Event not handled" to everything.
  if (!receivesCustom(s.events)) return lines;
  const codehost = lines.length > 0;
  lines.push(`  Custom:  ${base}/webhooks/custom/${s.name}${codehost ? '   (for other senders: CI, monitoring, scripts)' : ''}`);
  if (secretShown) {
    lines.push(`    Secret (shown once; '${commandName()} webhook show ${s.name} --show-secret' shows it again): ${s.secret}`);
  } else {
    lines.push(`    Secret: '${commandName()} webhook show ${s.name} --show-secret'`);
  }
  lines.push('    Senders sign with Standard Webhooks or X-Hub-Signature-256, or send Authorization: Bearer <secret>.');
  return lines;
}
