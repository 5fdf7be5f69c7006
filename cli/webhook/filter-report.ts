/** `webhook test`: each payload filter's result over the test payload. */
import { evaluateFilters } from '../../functions/core/filters/evaluate';

export function filterReport(filters: string[], payload: unknown): string {
  const results = evaluateFilters(filters, payload);
  const failing = results.filter((r) => !r.passed).length;
  const lines = results.map((r) => `  ${r.passed ? 'pass' : 'FAIL'}  ${r.filter}   (${r.detail})`);
  const verdict = failing === 0 ? 'all hold: the event would be queued' : `${failing === 1 ? 'one fails' : `${failing} fail`}: the event would be answered 200 "Filtered out"`;
  return [`\nFilters (${verdict}):`, ...lines].join('\n');
}
