/** How subscriptions and events look on a terminal and in --json. */
import type { EventRecord, Subscription } from '../functions/core/types';

/** The public fields of §2.4, in order; the secret only when asked for. */
export function subscriptionJson(s: Subscription, withSecret = false): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: s.name, events: s.events, prompt: s.prompt ?? null, skills: s.skills, deliver: s.deliver,
    description: s.description ?? null, state: s.state, created_at: s.created_at, updated_at: s.updated_at,
  };
  if (s.channel) out.channel = s.channel;
  if (s.chat_id) out.chat_id = s.chat_id;
  if (s.comment_mode) out.comment_mode = s.comment_mode;
  if (withSecret) out.secret = s.secret;
  return out;
}

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

const list = (values: string[], empty: string) => (values.length === 0 ? empty : values.join(','));

export function subscriptionRow(s: Subscription): string[] {
  return [s.name, s.state, list(s.events, '(all)'), list(s.deliver, 'log'), list(s.skills, '-'), s.created_at.slice(0, 19).replace('T', ' ')];
}

export function describeSubscription(s: Subscription, withSecret: boolean): string {
  const rows: Array<[string, string]> = [
    ['name', s.name], ['state', s.state], ['description', s.description ?? '-'], ['events', list(s.events, '(all events)')],
    ['skills', list(s.skills, '-')], ['deliver', list(s.deliver, 'log')],
  ];
  if (s.channel) rows.push(['channel', s.channel]);
  if (s.chat_id) rows.push(['chat_id', s.chat_id]);
  rows.push(['created_at', s.created_at], ['updated_at', s.updated_at]);
  if (withSecret) rows.push(['secret', s.secret]);
  const width = Math.max(...rows.map(([k]) => k.length));
  const prompt = s.prompt ? `prompt:\n  ${s.prompt.split('\n').join('\n  ')}` : 'prompt: (none: the event type and the payload)';
  return [...rows.map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${v}`), prompt].join('\n');
}

export function eventJson(r: EventRecord): Record<string, unknown> {
  return {
    event_id: r.event_id, subscription: r.subscription, status: r.status, event: r.event, action: r.action ?? null,
    delivery_id: r.delivery_id, received_at: r.received_at, updated_at: r.updated_at, attempts: r.attempts ?? 0,
    targets: r.targets ?? {}, error: r.error ?? null, warnings: r.warnings ?? [], reply: r.reply ?? null,
    ...(r.message.replay_of ? { replay_of: r.message.replay_of } : {}),
  };
}

export function eventRow(r: EventRecord): string[] {
  const event = r.action ? `${r.event}.${r.action}` : r.event;
  const why = r.error ? `${r.error.code}: ${r.error.message}` : Object.entries(r.targets ?? {}).map(([t, o]) => `${t} ${o.status}`).join(', ');
  return [r.received_at.slice(0, 19).replace('T', ' '), r.event_id, event, r.status, String(r.attempts ?? 0), why.slice(0, 100)];
}
