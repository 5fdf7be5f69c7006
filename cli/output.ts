/** How subscriptions and events look on a terminal and in --json. */
import { escapeControl, escapeTerminal } from '../functions/core/log';
import type { EventRecord, Subscription } from '../functions/core/types';
import { notTakenReason } from '../functions/core/subscriptions/held-settle';
import { asInvoked } from './invocation';

/** The colour codes paint() writes: the only escape sequences the CLI lets through to a terminal. */
const OUR_SGR = /(\u001b\[(?:0|1|2|31|32|33)m)/;

/**
 * Everything the CLI prints passes here (the backstop; views escape payload text where they
 * build it, so table cells are measured as shown). Payload text (titles, replies,
 * transcripts, filter details) can hold escape sequences (window title, OSC 52 clipboard
 * writes, line erases that forge rows), CR, backspace, C1 controls and bidi overrides.
 * Every control character is written as a visible escape (\u001b, \r), except line
 * breaks, tabs and, when colour is on, paint()'s own colours. Also safe for JSON output:
 * those characters only occur inside its strings, where the escape means the same character.
 */
export function terminalSafe(text: string, colour: boolean): string {
  if (!colour) return escapeTerminal(text);
  return text.split(OUR_SGR).map((piece, i) => (i % 2 === 1 ? piece : escapeTerminal(piece))).join('');
}

/**
 * The public fields of §2.4 with §2.4's names, in its order and always present (`[]`/`null`
 * when unset); then the other settings, each when set; the secret only when asked for.
 */
export function subscriptionJson(s: Subscription, withSecret = false): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: s.name, events: s.events, filters: s.filters ?? [], agent: s.agent ?? null, debounce: debounceJson(s.debounce_seconds),
    prompt: s.prompt ?? null, skills: s.skills, deliver: s.deliver,
    description: s.description ?? null, state: s.state, created_at: s.created_at, updated_at: s.updated_at,
  };
  if (s.channel) out.channel = s.channel;
  if (s.chat_id) out.chat_id = s.chat_id;
  if (s.max_tokens !== undefined) out.max_tokens = s.max_tokens;
  if (s.daily_tokens !== undefined) out.daily_tokens = s.daily_tokens;
  Object.assign(out, agentSettingsJson(s));
  if (s.comment_mode) out.comment_mode = s.comment_mode;
  if (withSecret) out.secret = s.secret;
  return out;
}

/** How output is drawn: colour and aligned columns on a terminal, plain tab-separated text when piped. */
export interface OutputStyle {
  tty: boolean;
  color: boolean;
  columns: number;
}

/** Colour only on a TTY, and never when NO_COLOR is set (https://no-color.org). */
export function outputStyle(stream: { isTTY?: boolean; columns?: number } = process.stdout, env: NodeJS.ProcessEnv = process.env): OutputStyle {
  const tty = stream.isTTY === true;
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  return { tty, color: tty && !noColor && env.TERM !== 'dumb', columns: stream.columns && stream.columns > 20 ? stream.columns : 100 };
}

const ANSI = { green: 32, yellow: 33, red: 31, dim: 2, bold: 1 } as const;
export function paint(style: OutputStyle, colour: keyof typeof ANSI, text: string): string {
  return style.color && text ? `\u001b[${ANSI[colour]}m${text}\u001b[0m` : text;
}

const STATUS_COLOURS: Record<string, keyof typeof ANSI> = {
  delivered: 'green', active: 'green', suppressed: 'yellow', held: 'yellow', queued: 'yellow', processing: 'yellow', paused: 'yellow',
  superseded: 'dim', failed: 'red', abandoned: 'red', rate_limited: 'red', over_budget: 'red',
};

/** Shrinks the widest columns until the row fits `columns` (two spaces between columns). */
function fitWidths(widths: number[], headers: string[], columns: number): number[] {
  const out = [...widths];
  const total = () => out.reduce((a, b) => a + b, 0) + 2 * (out.length - 1);
  while (total() > columns) {
    let widest = 0;
    for (let i = 1; i < out.length; i += 1) if ((out[i] ?? 0) > (out[widest] ?? 0)) widest = i;
    const floor = Math.max(4, headers[widest]?.length ?? 0);
    if ((out[widest] ?? 0) <= floor) break;
    out[widest] = (out[widest] ?? 0) - 1;
  }
  return out;
}

export const clip = (text: string, width: number) => (text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`);

/** A table cell on one line, its control characters visible (and counted) before the columns are laid out. */
const cell = (text: string) => escapeControl(text.replace(/[\t\n]/g, ' '));

export function table(headers: string[], cells: string[][], style: OutputStyle = outputStyle()): string {
  const rows = cells.map((r) => r.map(cell));
  // Piped: one line per row, cells separated by tabs, nothing else (for cut, awk, sort).
  if (!style.tty) return [headers, ...rows].map((r) => r.join('\t')).join('\n');
  const natural = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const widths = fitWidths(natural, headers, style.columns);
  const statusColumns = new Set(headers.map((h, i) => (h === 'STATUS' || h === 'STATE' ? i : -1)).filter((i) => i >= 0));
  const line = (cells: string[], header: boolean) => cells.map((c, i) => {
    const text = clip(c, widths[i] ?? 0);
    const padded = i === cells.length - 1 ? text : text.padEnd(widths[i] ?? 0);
    if (header) return paint(style, 'bold', padded);
    const colour = statusColumns.has(i) ? STATUS_COLOURS[c] : undefined;
    return colour ? paint(style, colour, text) + padded.slice(text.length) : padded;
  }).join('  ').trimEnd();
  return [line(headers, true), ...rows.map((r) => line(r, false))].join('\n');
}

const list = (values: string[], empty: string) => (values.length === 0 ? empty : values.join(','));

/**
 * `debounce` as `--debounce` takes it and config.yaml writes durations (`timeout: 120s`):
 * whole seconds with their unit, so the value can be passed back as it is; null when off.
 */
export function debounceJson(seconds: number | undefined): string | null {
  return seconds ? `${seconds}s` : null;
}

/** Issue 17's per-subscription agent settings that §2.4 does not name, present only when set. */
function agentSettingsJson(s: Subscription): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (s.model) out.model = s.model;
  if (s.max_steps) out.max_steps = s.max_steps;
  if (s.timeout_ms) out.timeout_ms = s.timeout_ms;
  if (s.max_runs_per_hour) out.max_runs_per_hour = s.max_runs_per_hour;
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
  if (s.max_tokens !== undefined) rows.push(['max_tokens', String(s.max_tokens)]);
  if (s.daily_tokens !== undefined) rows.push(['daily_tokens', String(s.daily_tokens)]);
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
    usage: r.usage ?? null,
    ...(r.model ? { model: r.model } : {}), ...(r.superseded_by ? { superseded_by: r.superseded_by } : {}),
  };
}

/**
 * Why a suppressed record was not run, and the warnings left to list: a record no agent saw
 * (the worker stores the reply of every run) that a release did not run gives the
 * release's own "Not run" warning, shortened, first (held-settle.ts); others the agent's [SILENT].
 */
function suppression(r: EventRecord): { reason: string; warnings: string[] } {
  const warnings = r.warnings ?? [];
  const ran = r.reply !== undefined || r.usage !== undefined;
  const index = ran ? -1 : warnings.findIndex((w) => notTakenReason(w) !== undefined);
  if (index < 0) return { reason: 'the agent answered [SILENT]', warnings };
  return { reason: `not run: updated while held (${notTakenReason(warnings[index] as string)})`, warnings: warnings.filter((_, i) => i !== index) };
}

/** What happened, in one cell: the reason of a failure or suppression, targets, warnings, the reply's start. */
export function eventDetail(r: EventRecord): string {
  const parts: string[] = [];
  const { reason, warnings } = r.status === 'suppressed' && !r.error ? suppression(r) : { reason: undefined, warnings: r.warnings ?? [] };
  // The worker writes its hints as `'hookagent …'`: shown as this CLI is run (npx, --config-dir).
  if (r.error) parts.push(`${r.error.code}: ${asInvoked(r.error.message)}`);
  else if (reason) parts.push(reason);
  else if (r.superseded_by) parts.push(`superseded by ${r.superseded_by}`);
  const model = r.usage?.model ?? r.model;
  if (model) parts.push(`model ${model}`);
  const targets = Object.entries(r.targets ?? {}).map(([t, o]) => `${t} ${o.status}`);
  if (targets.length > 0) parts.push(targets.join(', '));
  if (warnings.length > 0) parts.push(`${warnings.length} warning(s): ${warnings[0]}`);
  if (r.reply && r.status !== 'failed') parts.push(`reply: "${r.reply.replace(/\s+/g, ' ').slice(0, 60)}${r.reply.length > 60 ? '…' : ''}"`);
  const text = parts.join(' · ');
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

export function eventRow(r: EventRecord): string[] {
  const event = r.action ? `${r.event}.${r.action}` : r.event;
  return [r.received_at.slice(0, 19).replace('T', ' '), r.event_id, event, r.status, String(r.attempts ?? 0), eventDetail(r)];
}
