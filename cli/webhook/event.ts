/**
 * `webhook event <event-id> [--json]`: the whole story of one event, per subscription that
 * took it: the request (source, type, delivery id), the subscription's filters, the rendered
 * prompt, the agent's usage and transcript (system prompt hash, fenced user message, each
 * tool call with its input and capped result, the reply), and the deliveries.
 */
import { loadTranscript } from '../../functions/core/agent/transcript-store';
import { usageSummary, type Transcript } from '../../functions/core/agent/run-record';
import { HookError, isHookError } from '../../functions/core/errors';
import { settleShown } from '../../functions/core/ingest/abandoned';
import type { EventRecord, Subscription } from '../../functions/core/types';
import { withStores, type CliContext } from '../context';
import { escapeTerminal } from '../../functions/core/log';
import { findRequest, isRequestId, requestNotFound, requestText } from './request-entry';
import { asInvoked } from '../invocation';

export interface EventStory {
  record: EventRecord;
  filters: string[];
  transcript?: Transcript;
  transcript_error?: string;
}

export function storyJson(s: EventStory): Record<string, unknown> {
  const r = s.record;
  return {
    event_id: r.event_id, subscription: r.subscription, status: r.status, attempts: r.attempts ?? 0,
    request: { source: r.source, event: r.event, action: r.action ?? null, delivery_id: r.delivery_id, received_at: r.received_at, replay_of: r.message.replay_of ?? null },
    filters: s.filters, prompt: r.prompt ?? null, warnings: r.warnings ?? [], usage: r.usage ?? null,
    transcript: s.transcript ?? null, ...(s.transcript_error ? { transcript_error: s.transcript_error } : {}),
    reply: r.reply ?? null, deliveries: r.targets ?? {}, error: r.error ?? null, timings: r.timings ?? {}, updated_at: r.updated_at,
    ...(r.superseded_by ? { superseded_by: r.superseded_by } : {}),
  };
}

/** Stored text (prompts, replies, tool results: payload text) indented, its control characters visible. */
const indent = (text: string, by = '    ') => escapeTerminal(text).split('\n').map((l) => `${by}${l}`).join('\n');

/** A transcript as indented text lines (also printed by `webhook test --dry-run`); the event's earlier runs first, each under its own heading. */
export function transcriptLines(t: Transcript): string[] {
  const runs = [...(t.earlier ?? []), t];
  if (runs.length === 1) return runLines(t, 'transcript:');
  return runs.flatMap((run, i) => runLines(run, `transcript of run ${i + 1} of ${runs.length}${i < runs.length - 1 ? ' (an earlier attempt)' : ''}:`));
}

function runLines(t: Transcript, heading: string): string[] {
  const lines = [`  ${heading}`, `    ${t.provider}${t.model ? ` ${t.model}` : ''}, system prompt sha256: ${t.system_sha256}`, '    user:', indent(t.user, '      ')];
  for (const step of t.steps) {
    lines.push(`    step ${step.step}${step.stop ? ` (stop: ${step.stop}${step.stop_reason !== undefined ? ` ${escapeTerminal(JSON.stringify(step.stop_reason))}` : ''})` : ''}:${step.text ? '' : ' (no text)'}`);
    if (step.text) lines.push(indent(step.text, '      '));
    for (const call of step.tool_calls) {
      lines.push(`      → ${call.name}(${JSON.stringify(call.input)}) ${call.ok ? 'ok' : 'ERROR'}, ${call.ms} ms, ${call.bytes} bytes`, indent(call.result, '        '));
    }
  }
  if (t.retried_shorter) lines.push('    (the reply was cut at the token limit and asked again, shorter)');
  return lines;
}

export function storyText(s: EventStory): string {
  const r = s.record;
  const lines = [
    `${r.event_id} → ${r.subscription}: ${r.status} (attempts: ${r.attempts ?? 0}, updated ${r.updated_at})`,
    `  request:  ${r.source} ${r.action ? `${r.event}.${r.action}` : r.event}, delivery ${r.delivery_id}, received ${r.received_at}${r.message.replay_of ? `, replay of ${r.message.replay_of}` : ''}`,
    `  filters:  ${s.filters.length > 0 ? s.filters.join(' AND ') : '(none)'}`,
  ];
  if (r.error) lines.push(`  error:    ${r.error.code}: ${asInvoked(r.error.message)}`);
  if (r.superseded_by) lines.push(`  superseded by ${r.superseded_by}: a later event of the same subject runs instead (debounce)`);
  for (const w of r.warnings ?? []) lines.push(`  warning:  ${w}`);
  lines.push('  prompt:', r.prompt !== undefined ? indent(r.prompt) : '    (not rendered yet)');
  // Estimated counts (the provider reported none) carry "~" and say so.
  if (r.usage) lines.push(`  usage:    ${usageSummary(r.usage)}`);
  const t = s.transcript;
  if (t) {
    lines.push(...transcriptLines(t));
  } else if (s.transcript_error) {
    lines.push(`  transcript: unavailable (${s.transcript_error})`);
  } else {
    lines.push('  transcript: (none: no model was called)');
  }
  lines.push('  reply:', r.reply !== undefined ? indent(r.reply) : '    (none)');
  const targets = Object.entries(r.targets ?? {});
  lines.push(`  deliveries:${targets.length === 0 ? ' (none)' : ''}`);
  for (const [kind, o] of targets) lines.push(`    ${kind}: ${o.status} at ${o.at}${o.detail ? ` (${o.detail})` : ''}`);
  return lines.join('\n');
}

export async function event(ctx: CliContext, eventId: string, json: boolean): Promise<void> {
  // `webhook events` lists filtered requests by their request-log id: open those too.
  if (isRequestId(eventId)) {
    const entry = await withStores(ctx, (stores) => findRequest(stores, eventId));
    if (!entry) throw requestNotFound(eventId);
    return ctx.out(json ? JSON.stringify(entry, null, 2) : requestText(entry));
  }
  const stories = await withStores(ctx, async (stores) => {
    // A request that died before queueing reads `abandoned`, as in `webhook events` and the console.
    const records = await settleShown(stores, await stores.events.getEvent(eventId));
    if (records.length === 0) throw new HookError('event_not_found', `No event '${eventId}' in the event log (records are kept 14 days); list recent ones with 'hookagent webhook events <name>'`);
    const subscriptions = new Map<string, Subscription | undefined>();
    const out: EventStory[] = [];
    for (const record of records) {
      if (!subscriptions.has(record.subscription)) subscriptions.set(record.subscription, await stores.subscriptions.get(record.subscription));
      const story: EventStory = { record, filters: subscriptions.get(record.subscription)?.filters ?? [] };
      try {
        if (record.transcript_ref && (record.transcript_ref.startsWith('{') || stores.payloads)) {
          story.transcript = stores.payloads ? await loadTranscript(stores.payloads, record.transcript_ref) : (JSON.parse(record.transcript_ref) as Transcript);
        }
      } catch (error) {
        story.transcript_error = isHookError(error) ? error.message : String(error);
      }
      out.push(story);
    }
    return out;
  });
  if (json) return ctx.out(JSON.stringify(stories.map(storyJson), null, 2));
  ctx.out(escapeTerminal(stories.map(storyText).join('\n\n')));
}
