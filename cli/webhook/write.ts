/** `subscribe` and `update`: validate every field, then write with a conditional put. */
import { HookError } from '../../functions/core/errors';
import { eventOrigin } from '../../functions/core/events/known';
import { newSubscriptionSecret } from '../../functions/core/ids';
import {
  validateCommentMode, validateEvents, validateName, validatePrompt, validateSkills, validateTargets,
} from '../../functions/core/subscriptions/validate';
import type { Result } from '../../functions/core/errors';
import type { Subscription } from '../../functions/core/types';
import { baseUrl, withStores, type CliContext } from '../context';

export interface SubscriptionFields {
  events?: string[];
  prompt?: string;
  skills?: string[];
  deliver?: string[];
  description?: string;
  channel?: string;
  chatId?: string;
  commentMode?: string;
}

function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new HookError(result.error.code, result.error.message);
  return result.value;
}

/** Validates the merged fields; prints warnings and the placeholders found. */
function validated(ctx: CliContext, base: Omit<Subscription, 'events' | 'skills' | 'deliver'> & Partial<Subscription>, fields: SubscriptionFields): Subscription {
  const { events, warnings } = unwrap(validateEvents(fields.events ?? base.events ?? []));
  for (const warning of warnings) ctx.warn(`warning: ${warning}`);
  const prompt = fields.prompt ?? base.prompt;
  const placeholders = prompt === undefined || prompt === '' ? [] : unwrap(validatePrompt(prompt));
  const skills = unwrap(validateSkills(fields.skills ?? base.skills ?? [], ctx.skills));
  const requested = fields.deliver ?? base.deliver ?? [];
  const deliver = unwrap(validateTargets(requested.length === 0 ? ['log'] : requested, events, ctx.config));
  if (placeholders.length > 0) ctx.out(`Placeholders: ${placeholders.map((p) => `{${p}}`).join(', ')}`);
  const subscription: Subscription = { ...base, events, skills, deliver } as Subscription;
  if (prompt !== undefined && prompt !== '') subscription.prompt = prompt;
  else delete subscription.prompt;
  const description = fields.description ?? base.description;
  if (description) subscription.description = description;
  const channel = fields.channel ?? base.channel;
  if (channel) subscription.channel = channel;
  const chatId = fields.chatId ?? base.chat_id;
  if (chatId) subscription.chat_id = chatId;
  if (fields.commentMode !== undefined) subscription.comment_mode = unwrap(validateCommentMode(fields.commentMode));
  return subscription;
}

export async function subscribe(ctx: CliContext, name: string, fields: SubscriptionFields): Promise<void> {
  unwrap(validateName(name));
  const now = new Date().toISOString();
  const subscription = validated(ctx, { name, state: 'active', created_at: now, updated_at: now, secret: newSubscriptionSecret() }, fields);
  await withStores(ctx, (stores) => stores.subscriptions.create(subscription));
  printSetup(ctx, subscription);
}

export async function update(ctx: CliContext, name: string, fields: SubscriptionFields): Promise<void> {
  unwrap(validateName(name));
  await withStores(ctx, async (stores) => {
    const existing = await stores.subscriptions.get(name);
    if (!existing) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
    const next = validated(ctx, { ...existing, updated_at: new Date().toISOString() }, fields);
    await stores.subscriptions.put(next);
    ctx.out(`Updated subscription '${name}' (secret unchanged).`);
  });
}

function printSetup(ctx: CliContext, s: Subscription): void {
  const base = baseUrl(ctx.config);
  const origins = new Set(s.events.map(eventOrigin));
  const all = s.events.length === 0;
  const lines = [`Created subscription '${s.name}' (active), delivering to ${s.deliver.join(', ')}.`, '', 'Point your sender at:'];
  if (all || origins.has('github') || origins.has('both')) lines.push(`  GitHub:  ${base}/webhooks/github   (secret: webhooks.github.secret in config.yaml)`);
  if (all || origins.has('gitlab') || origins.has('both')) lines.push(`  GitLab:  ${base}/webhooks/gitlab   (secret token: webhooks.gitlab.secret in config.yaml)`);
  lines.push(`  Custom:  ${base}/webhooks/custom/${s.name}`);
  lines.push('', `Secret for ${base}/webhooks/custom/${s.name} (shown once; 'webhook show ${s.name} --show-secret' shows it again):`, `  ${s.secret}`);
  lines.push('', 'Sender setup:', '  Content type: application/json');
  lines.push(`  Events to send: ${all ? 'any (this subscription takes every event)' : [...new Set(s.events.map((e) => e.split('.')[0]))].join(', ')}`);
  lines.push('  Custom senders sign with Standard Webhooks or X-Hub-Signature-256, or send Authorization: Bearer <secret>.');
  ctx.out(lines.join('\n'));
}
