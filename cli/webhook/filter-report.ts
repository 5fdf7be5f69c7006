/** `webhook test`: each payload filter's result over the test payload, and the event filters' verdict. */
import { routeMatches } from '../../functions/core/events/filters';
import { causedByHookagent } from '../../functions/core/events/loop-guard';
import { evaluateFilters } from '../../functions/core/filters/evaluate';
import type { PreviewEvent } from './preview-event';

export function filterReport(filters: string[], payload: unknown): string {
  const results = evaluateFilters(filters, payload);
  const failing = results.filter((r) => !r.passed).length;
  const lines = results.map((r) => `  ${r.passed ? 'pass' : 'FAIL'}  ${r.filter}   (${r.detail})`);
  const verdict = failing === 0 ? 'all hold: the event would be queued' : `${failing === 1 ? 'one fails' : `${failing} fail`}: the event would be answered 200 "Filtered out"`;
  return [`\nFilters (${verdict}):`, ...lines].join('\n');
}

/**
 * `webhook test`: whether the subscription's event filters take the event it renders (the
 * sample of its first filter, or --payload/--event); said only when they do not, since the
 * rendered prompt would then never be sent.
 */
export function eventFilterReport(events: readonly string[], preview: PreviewEvent): string | undefined {
  const verdict = routeMatches(events, preview.source, preview.event, preview.action);
  if (verdict.matched) return undefined;
  return `\nEvent filters (no match: this event would NOT reach the subscription; it would be answered 200 "Event not handled"):\n  ${verdict.reason}`;
}

/**
 * What ingest does first, before routing and filters: a payload whose comment, review or
 * note ends with hookagent's own marker is its own comment coming back, answered 200
 * ignored. Said so that `test` and `--dry-run` on a delivery pasted from the host's log do
 * not promise a run that would not happen.
 */
export function loopGuardReport(payload: unknown): string | undefined {
  if (!payload || typeof payload !== 'object' || !causedByHookagent(payload as Record<string, unknown>)) return undefined;
  return '\nLoop guard: its comment ends with hookagent\'s own marker: the endpoint answers 200 ignored "Event caused by hookagent" and nothing is queued (the filters are not reached).';
}
