/**
 * `webhook test <name> --send`: posts a sample event, signed the way its sender signs, to
 * the running service, then prints the outcome from the event log.
 */
import { randomUUID } from 'node:crypto';
import { signHub, signStandardWebhooks } from '../../functions/core/auth/signatures';
import { resolveConfig } from '../../functions/core/config/load';
import { HookError } from '../../functions/core/errors';
import { classifyEvent, gitlabHeaderFor } from '../../functions/core/events/classify';
import { eventOrigin, GITHUB_UNROUTED_EVENT } from '../../functions/core/events/known';
import { selectSubscriptions } from '../../functions/core/ingest/select';
import { splitSource, splitType } from '../../functions/core/events/filters';
import type { EventRecord, Subscription } from '../../functions/core/types';
import { loadDotEnv } from '../local/first-run';
import { dataDir } from '../context';
import { staleConfigNote } from '../local/config-source';
import { GITLAB_SAMPLES, githubSample, sampleFor } from '../samples';
import { withStores, type CliContext, type Stores } from '../context';
import { refuseStrangersRepository, serviceUrl } from './send-target';
import { customTakes, sampleChoice, secretNeeded } from './sample-event';
import { hasSecret } from '../setup-hints';
import { commandName } from '../invocation';
import { progress } from '../progress';
import { FINAL_STATUSES, printSendOutcome } from './send-outcome';

interface Sample {
  path: string;
  body: string;
  headers: Record<string, string>;
  /** The delivery id it carries (its request log entry is found by it). */
  deliveryId: string;
  /** No sample ships for the event and none was given: a stub was sent. */
  stub?: boolean;
}

async function buildSample(ctx: CliContext, subscription: Subscription, payloadOption: Record<string, unknown> | undefined, eventOption: string | undefined): Promise<Sample> {
  loadDotEnv(ctx.configDir);
  const resolved = await resolveConfig(ctx.config, { get: async (name) => process.env[name] }, ['webhooks']);
  if (!resolved.ok) throw new HookError('config_invalid', resolved.error.message);
  // Your own payload goes where its sender would send it (a GitLab merge request to /webhooks/gitlab), as `webhook test` judges it.
  const choice = sampleChoice(subscription.events, { payload: payloadOption, eventOption, configured: (host) => hasSecret(resolved.value, host) });
  const qualified = splitSource(choice.filter);
  const [event = 'custom', action] = splitType(qualified.rest);
  // A subscription without events is reached only through its custom endpoint; a qualified filter names its endpoint.
  const origin = subscription.events.length === 0 || qualified.source === 'custom' ? 'unknown' : qualified.source ?? eventOrigin(event);
  const id = randomUUID();
  if ((origin === 'github' || origin === 'both') && resolved.value.webhooks.github?.secret[0]) {
    const sample = payloadOption ?? githubSample(event, action);
    if (!sample) throw new HookError('sample_unavailable', `No sample payload for GitHub '${event}' (samples come from @octokit/webhooks-examples, a dev dependency); pass --payload`);
    const body = JSON.stringify(sample);
    return { path: '/webhooks/github', body, deliveryId: id, headers: { 'x-github-event': event, 'x-github-delivery': id, 'x-hub-signature-256': signHub(body, resolved.value.webhooks.github.secret[0]) } };
  }
  if ((origin === 'gitlab' || origin === 'both') && resolved.value.webhooks.gitlab?.secret[0]) {
    const sample = GITLAB_SAMPLES[event];
    if (!payloadOption && !sample) throw new HookError('sample_unavailable', `No sample payload for GitLab '${event}'; pass --payload`);
    const body = JSON.stringify(payloadOption ?? sample?.[1]);
    // The header GitLab sends with the payload's own kind, when it names one.
    const kind = typeof payloadOption?.object_kind === 'string' ? payloadOption.object_kind : event;
    return { path: '/webhooks/gitlab', body, deliveryId: id, headers: { 'x-gitlab-event': (payloadOption ? undefined : sample?.[0]) ?? gitlabHeaderFor(kind) ?? `${event} Hook`, 'idempotency-key': id, 'x-gitlab-token': resolved.value.webhooks.gitlab.secret[0] } };
  }
  // The host's secret is not set: the custom endpoint, unless it never takes what the sample is judged by.
  if ((origin === 'github' || origin === 'gitlab') && !customTakes(choice)) throw secretNeeded(resolved.value, subscription.name, subscription.events, choice, origin);
  // The custom endpoint takes any JSON: a GitHub or GitLab sample too (its secret is not set yet), so the
  // prompt renders from the same realistic payload as `test --dry-run`.
  const shipped = payloadOption ? undefined : sampleFor(qualified.rest === '*' ? 'custom' : `${event}${action ? `.${action}` : ''}`);
  const stub = !payloadOption && !shipped;
  const body = JSON.stringify(payloadOption ?? shipped?.payload ?? { event_type: event, ...(action ? { action } : {}), test: true, sent_by: 'hookagent webhook test --send' });
  const timestamp = Math.floor(Date.now() / 1000);
  // A custom sender names its event in the payload (or X-Event-Type): your own --payload goes as it would, with no
  // header unless --event names the type; a built-in sample carries the filter's event in one.
  const type = payloadOption ? (eventOption === undefined ? undefined : qualified.rest) : event;
  return {
    path: `/webhooks/custom/${subscription.name}`, body, deliveryId: id, ...(stub ? { stub } : {}),
    headers: { ...(type ? { 'x-event-type': type } : {}), 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signStandardWebhooks(body, subscription.secret, id, timestamp) },
  };
}

/** The other subscriptions a GitHub or GitLab endpoint would hand this sample to (ingest's own routing and filters). */
async function alsoTaking(ctx: CliContext, sample: Sample, name: string): Promise<Subscription[]> {
  const source = sample.path === '/webhooks/github' ? 'github' : sample.path === '/webhooks/gitlab' ? 'gitlab' : undefined;
  if (!source) return [];
  const payload = JSON.parse(sample.body) as Record<string, unknown>;
  const identity = classifyEvent(source, sample.headers, payload);
  // GitHub's ping is answered before routing: no subscription takes it.
  if (!identity || isUnroutedPing(source, identity.event)) return [];
  const all = await withStores(ctx, (stores) => stores.subscriptions.list());
  return selectSubscriptions(all, source, identity.event, identity.action, payload).matched.filter((s) => s.name !== name);
}

const isUnroutedPing = (source: string, event: string | undefined): boolean => source === 'github' && event === GITHUB_UNROUTED_EVENT;

/**
 * What the request log says about `name` for this delivery: the filter that failed, or why it
 * was not a candidate. serve answers before its request-log entry is committed (with the next
 * group commit, a few ms later): looked for up to 2 s.
 */
async function turnedAway(stores: Stores, name: string, deliveryId: string): Promise<string | undefined> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const entry = (await stores.requests?.list({ limit: 100, since: Date.now() - 60_000 }))?.find((r) => r.delivery_id === deliveryId);
    if (entry || !stores.requests) return entry?.candidates?.find((c) => c.subscription === name && !c.matched)?.reason;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}

export async function send(ctx: CliContext, name: string, payload: Record<string, unknown> | undefined, event: string | undefined, urlOption: string | undefined, waitMs: number): Promise<void> {
  const subscription = await withStores(ctx, (stores) => stores.subscriptions.get(name));
  if (!subscription) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
  // A sample that cannot be sent is refused first: starting a serve would not help.
  const sample = await buildSample(ctx, subscription, payload, event);
  const url = serviceUrl(ctx, urlOption);
  const others = await alsoTaking(ctx, sample, name);
  // The sample fans out: another subscription that comments would comment on the sample's repository too.
  if (!payload) for (const taker of [subscription, ...others]) refuseStrangersRepository(taker, sample, name);
  // As `webhook test` says it: placeholders the stub lacks are then reported missing.
  if (sample.stub) ctx.warn(`note: no sample payload ships for this event: sending ${sample.body}; pass --payload <file|json> to send what your sender sends`);
  if (others.length > 0) {
    ctx.warn(`note: ${sample.path} fans out to every subscription that matches: ${others.map((o) => `'${o.name}'`).join(', ')} will take this event too and deliver to their own targets`);
  }
  let response: Response;
  try {
    response = await fetch(`${url}${sample.path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...sample.headers }, body: sample.body });
  } catch {
    throw new HookError('service_unreachable', `Nothing answers at ${url}: start the service with '${commandName()} serve' (or pass --url)`);
  }
  const answer = (await response.json()) as { status?: string; event_id?: string; subscriptions?: string[]; held?: string[] };
  ctx.out(`POST ${sample.path} → ${response.status} ${JSON.stringify(answer)}`);
  if (answer.status === 'ok' && sample.path === '/webhooks/github' && isUnroutedPing('github', sample.headers['x-github-event'])) {
    return ctx.out(`'${name}' did not take this event: GitHub's ping is answered 200 ok before routing and reaches no subscription`);
  }
  // Taken by others only, or by nobody: its record will never appear; say why now instead of waiting.
  const taken = [...(answer.subscriptions ?? []), ...(answer.held ?? [])];
  if (answer.status === 'ignored' || (answer.event_id && Array.isArray(answer.subscriptions) && !taken.includes(name))) {
    const why = await withStores(ctx, (stores) => turnedAway(stores, name, sample.deliveryId)).catch(() => undefined);
    ctx.out(`'${name}' did not take this event${why ? `: ${why}` : ''}${taken.length > 0 ? `; it went to ${taken.join(', ')}` : ''}`);
    return;
  }
  // Held for a paused subscription: nothing happens until it is resumed.
  if ((answer.status === 'held' && answer.subscriptions?.includes(name)) || answer.held?.includes(name)) {
    ctx.out(`'${name}' is paused: the event is held until '${commandName()} webhook resume ${name}' releases it (then '${commandName()} webhook events ${name}' shows its outcome)`);
    return;
  }
  if (!answer.event_id) {
    if (response.status >= 300) {
      const stale = staleConfigNote(ctx.configDir, dataDir(ctx.configDir));
      if (stale) ctx.warn(`note: ${stale}`);
      process.exitCode = 1;
    }
    return;
  }
  // Wait for the outcome: the CLI polls the event log the running service writes.
  const deadline = Date.now() + waitMs;
  let record: EventRecord | undefined;
  const waiting = progress(`Waiting for ${answer.event_id}`);
  while (Date.now() < deadline) {
    record = await withStores(ctx, (stores) => stores.events.get(answer.event_id as string, name));
    if (record && FINAL_STATUSES.has(record.status)) break;
    waiting.update(record?.status ?? 'queued');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  waiting.done();
  printSendOutcome(ctx, subscription, record, waitMs);
}
