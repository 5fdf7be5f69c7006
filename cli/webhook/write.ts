/** `subscribe` and `update`: validate every field, then write with a conditional put. */
import { HookError } from '../../functions/core/errors';
import { newSubscriptionSecret } from '../../functions/core/ids';
import {
  validateCommentMode, validateEvents, validateName, validatePrompt, validateSkills, validateTargets,
} from '../../functions/core/subscriptions/validate';
import type { Result } from '../../functions/core/errors';
import { applySettings, type SettingsInput } from '../../functions/core/subscriptions/settings';
import { splitSource } from '../../functions/core/events/filters';
import { ignoredTargetSettings } from '../../functions/core/delivery/targets';
import { pointerKeptUntil } from '../../functions/core/ingest/debounce';
import { WORKER_TIMEOUT_SECONDS } from '../../functions/aws/limits';
import type { Subscription } from '../../functions/core/types';
import { systemClock } from '../../functions/core/ports';
import { changeSubscription } from '../../functions/core/subscriptions/lifecycle';
import { printedBaseUrl, withStores, type CliContext } from '../context';
import { codehostEndpoints, senderSetup } from '../setup-hints';
import { applyTokenLimits } from './token-options';
import { alertSenderFilters, unsendableCredentials } from './config-checks';

export interface SubscriptionFields {
  events?: string[];
  prompt?: string;
  skills?: string[];
  deliver?: string[];
  description?: string;
  channel?: string;
  chatId?: string;
  /** `--max-tokens` / `--daily-tokens`: a number, or `none` to clear. */
  maxTokens?: string;
  dailyTokens?: string;
  /** Issue 17: payload filters, --agent none, model, max steps, timeout, max runs per hour, debounce. */
  settings?: SettingsInput;
  commentMode?: string;
}

function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new HookError(result.error.code, result.error.message);
  return result.value;
}

/**
 * Validates the merged fields; prints warnings and the placeholders found, once every field
 * is valid (a refused command prints nothing but its error: callers pass a `buffered` context,
 * flushed once the write landed). Both are about what this
 * command changes: an event filter or prompt already stored was spoken of when it was
 * given, so `update --description …` does not repeat it.
 */
function validated(ctx: CliContext, base: Omit<Subscription, 'events' | 'skills' | 'deliver'> & Partial<Subscription>, fields: SubscriptionFields): Subscription {
  // Actions are judged on the filters this command gives: a stored one does not block an update.
  const { events } = unwrap(validateEvents(fields.events ?? base.events ?? [], { actions: false }));
  const stored = new Set(base.events ?? []);
  // Alertmanager's, Grafana's and PagerDuty's types are recognised by payload shape: not "unknown" names.
  const alerts = alertSenderFilters((fields.events ?? []).filter((e) => !stored.has(e)));
  const { warnings } = unwrap(validateEvents(alerts.others));
  const prompt = fields.prompt ?? base.prompt;
  const placeholders = prompt === undefined || prompt === '' ? [] : unwrap(validatePrompt(prompt, fields.prompt !== undefined));
  const skills = unwrap(validateSkills(fields.skills ?? base.skills ?? [], ctx.skills));
  const requested = fields.deliver ?? base.deliver ?? [];
  const deliver = unwrap(validateTargets(requested.length === 0 ? ['log'] : requested, events, ctx.config));
  // The agent and a round of deliveries must fit in one worker invocation (as agent.timeout must).
  const maxTimeoutMs = WORKER_TIMEOUT_SECONDS * 1000 - 3 * ctx.config.delivery.timeout_ms;
  const settings = unwrap(applySettings(base, { ...fields.settings, maxTimeoutMs }));
  if (fields.settings?.model) refuseUnallowedModel(ctx, fields.settings.model);
  const subscription: Subscription = { ...base, ...settings, events, skills, deliver } as Subscription;
  for (const key of ['filters', 'agent', 'model', 'max_steps', 'timeout_ms', 'max_runs_per_hour', 'debounce_seconds'] as const) {
    if (settings[key] === undefined) delete subscription[key];
  }
  if (prompt !== undefined && prompt !== '') subscription.prompt = prompt;
  else delete subscription.prompt;
  // `--description ''` clears it, as an empty value clears the other fields.
  const description = fields.description ?? base.description;
  if (description) subscription.description = description;
  else delete subscription.description;
  const channel = fields.channel ?? base.channel;
  if (channel) subscription.channel = channel;
  else delete subscription.channel;
  const chatId = fields.chatId ?? base.chat_id;
  if (chatId) subscription.chat_id = chatId;
  else delete subscription.chat_id;
  applyTokenLimits(subscription, fields);
  if (fields.commentMode !== undefined) subscription.comment_mode = unwrap(validateCommentMode(fields.commentMode));
  // Valid: now say what there is to say (the channel and targets notes when this command sets them).
  for (const warning of [...alerts.warnings, ...warnings]) ctx.warn(`warning: ${warning}`);
  if (fields.prompt !== undefined && placeholders.length > 0) ctx.out(`Placeholders: ${placeholders.map((p) => `{${p}}`).join(', ')}`);
  const ignored = fields.channel !== undefined || fields.deliver !== undefined ? ignoredTargetSettings(subscription, ctx.config) : [];
  for (const note of ignored) ctx.warn(`warning: ${note} (--channel '' removes it)`);
  return subscription;
}

/**
 * On an AWS stage with Bedrock the worker's role may invoke only agent.model and agent.models
 * (infra/deploy-config.cjs): any other --model would fail every run with AccessDenied.
 */
function refuseUnallowedModel(ctx: CliContext, model: string): void {
  const { agent } = ctx.config;
  if (!ctx.deployment || agent.provider !== 'bedrock') return;
  const allowed = [agent.model, ...(agent.models ?? [])].filter((m): m is string => Boolean(m));
  if (allowed.includes(model)) return;
  throw new HookError('invalid_option', `--model ${model}: the worker of stage '${ctx.deployment.stage}' may invoke only ${allowed.join(', ') || 'agent.model'} on Bedrock (its IAM role allows the models config.yaml names); add it to agent.models in config.yaml and deploy again (npx osls deploy)`);
}

/**
 * `ctx` with its output held back: what `validated` says is printed (`flush`) only once the
 * change landed, so a refused command prints nothing but its error; `clear` drops what an
 * attempt that is tried again said.
 */
function buffered(ctx: CliContext): { quiet: CliContext; flush(): void; clear(): void } {
  let said: Array<() => void> = [];
  return {
    quiet: { ...ctx, out: (t) => said.push(() => ctx.out(t)), warn: (t) => said.push(() => ctx.warn(t)) },
    flush: () => {
      for (const say of said) say();
      said = [];
    },
    clear: () => {
      said = [];
    },
  };
}

export async function subscribe(ctx: CliContext, name: string, fields: SubscriptionFields): Promise<void> {
  unwrap(validateName(name));
  const now = new Date().toISOString();
  // A name that exists is refused by create(), after validation: its warnings and placeholders wait for it.
  const output = buffered(ctx);
  const subscription = validated(output.quiet, { name, state: 'active', created_at: now, updated_at: now, secret: newSubscriptionSecret() }, fields);
  await withStores(ctx, (stores) => stores.subscriptions.create(subscription));
  output.flush();
  warnUnsendable(ctx, fields);
  printSetup(ctx, subscription);
}

export async function update(ctx: CliContext, name: string, fields: SubscriptionFields): Promise<void> {
  unwrap(validateName(name));
  await withStores(ctx, async (stores) => {
    // Said once, about the version the change landed on (another command's change may make it apply again).
    const output = buffered(ctx);
    await changeSubscription({ subscriptions: stores.subscriptions, clock: systemClock }, name, (existing, at) => {
      output.clear();
      const next = validated(output.quiet, { ...existing, updated_at: at }, fields);
      // What a held event is checked against again at its release (held-settle.ts): only when this changed it.
      const same = (a: readonly string[] | undefined, b: readonly string[] | undefined) => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
      if (!same(next.events, existing.events) || !same(next.filters, existing.filters)) next.routing_changed_at = at;
      // Events queued under a longer window are still judged by their subject's latest: later ones must keep recording it.
      const pointerUntil = pointerKeptUntil(existing, next, Date.parse(at));
      if (pointerUntil) next.debounce_pointer_until = pointerUntil;
      else delete next.debounce_pointer_until;
      return next;
    });
    output.flush();
    ctx.out(`Updated subscription '${name}' (secret unchanged).`);
  });
  warnUnsendable(ctx, fields);
}

/** A credential of the targets this command sets that no HTTP header can carry (hunt 5 D3): said now, not as failed deliveries. */
function warnUnsendable(ctx: CliContext, fields: SubscriptionFields): void {
  // Locally: a deployment's secrets are in SSM, checked when its functions resolve them.
  if (fields.deliver === undefined || ctx.deployment) return;
  for (const problem of unsendableCredentials(ctx.config, ctx.configDir, fields.deliver)) ctx.warn(`warning: ${problem}; serve refuses this configuration until it is fixed`);
}

function printSetup(ctx: CliContext, s: Subscription): void {
  const lines = [`Created subscription '${s.name}' (active), delivering to ${s.deliver.join(', ')}.`, '', 'Point your sender at:'];
  // Once: resolving it may warn about a ${VAR} with no value.
  const base = printedBaseUrl(ctx);
  lines.push(...senderSetup(ctx.config, base, s, true, ctx.deployment));
  const codehost = codehostEndpoints(s.events);
  lines.push('', 'Sender setup:', '  Content type: application/json');
  if (codehost.length > 0) lines.push(`  Events to send: ${[...new Set(s.events.map((e) => (e.includes(':') ? e.slice(e.indexOf(':') + 1) : e).split('.')[0]))].join(', ')}`);
  else lines.push(`  This subscription has no code-host events: it is reached only through ${base}/webhooks/custom/${s.name}`);
  ctx.out(lines.join('\n'));
}
