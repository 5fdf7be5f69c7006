/** `webhook test`: each payload filter's result over the test payload. */
import { evaluateFilters } from '../../functions/core/filters/evaluate';

export function filterReport(filters: string[], payload: unknown): string {
  const results = evaluateFilters(filters, payload);
  const passed = results.every((r) => r.passed);
  const lines = results.map((r) => `  ${r.passed ? 'pass' : 'FAIL'}  ${r.filter}   (${r.detail})`);
  return [`\nFilters (${passed ? 'all hold: the event would be queued' : 'one fails: the event would be answered 200 "Filtered out"'}):`, ...lines].join('\n');
}
