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
  Object.assign(out, settingsJson(s));
  if (withSecret) out.secret = s.secret;
  return out;
}

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

const list = (values: string[], empty: string) => (values.length === 0 ? empty : values.join(','));

/** Issue 17's settings, present only when set. */
function settingsJson(s: Subscription): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (s.filters?.length) out.filters = s.filters;
  if (s.agent) out.agent = s.agent;
  if (s.model) out.model = s.model;
  if (s.max_steps) out.max_steps = s.max_steps;
  if (s.timeout_ms) out.timeout_ms = s.timeout_ms;
  if (s.max_runs_per_hour) out.max_runs_per_hour = s.max_runs_per_hour;
  if (s.debounce_seconds) out.debounce_seconds = s.debounce_seconds;
  return out;
}

/** What `events` shows: the filters, or where an event-less subscription is reached. */
export const NO_EVENTS = '(custom endpoint only)';

export function subscriptionRow(s: Subscription): string[] {
  return [s.name, s.state, list(s.events, NO_EVENTS), list(s.deliver, 'log'), list(s.skills, '-'), s.created_at.slice(0, 19).replace('T', ' ')];
}

export function describeSubscription(s: Subscription, withSecret: boolean): string {
  const rows: Array<[string, string]> = [
    ['name', s.name], ['state', s.state], ['description', s.description ?? '-'], ['events', s.events.length === 0 ? `${NO_EVENTS}: every event sent to /webhooks/custom/${s.name}` : s.events.join(', ')],
    ['skills', list(s.skills, '-')], ['deliver', list(s.deliver, 'log')],
  ];
  if (s.channel) rows.push(['channel', s.channel]);
  if (s.chat_id) rows.push(['chat_id', s.chat_id]);
  for (const filter of s.filters ?? []) rows.push(['filter', filter]);
  if (s.agent === 'none') rows.push(['agent', 'none (the rendered template is delivered as is)']);
  if (s.model) rows.push(['model', s.model]);
  if (s.max_steps) rows.push(['max_steps', String(s.max_steps)]);
  if (s.timeout_ms) rows.push(['timeout', `${s.timeout_ms / 1000}s`]);
  if (s.max_runs_per_hour) rows.push(['max_runs_per_hour', String(s.max_runs_per_hour)]);
  if (s.debounce_seconds) rows.push(['debounce', `${s.debounce_seconds}s (latest event per subject)`]);
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
    ...(r.model ? { model: r.model } : {}), ...(r.superseded_by ? { superseded_by: r.superseded_by } : {}),
  };
}

export function eventRow(r: EventRecord): string[] {
  const event = r.action ? `${r.event}.${r.action}` : r.event;
  const done = r.error ? `${r.error.code}: ${r.error.message}` : Object.entries(r.targets ?? {}).map(([t, o]) => `${t} ${o.status}`).join(', ');
  const why = [r.superseded_by ? `superseded by ${r.superseded_by}` : '', r.model ? `model ${r.model}` : '', done].filter(Boolean).join('; ');
  return [r.received_at.slice(0, 19).replace('T', ' '), r.event_id, event, r.status, String(r.attempts ?? 0), why.slice(0, 100)];
}
