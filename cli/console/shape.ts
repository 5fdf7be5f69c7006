/**
 * Shapes what the console sends the page so that every part of it can be shown.
 * - `bounded`: a payload (or transcript) nested deeper than the console walks is cut at
 *   that depth. Ingest keeps such payloads as raw bytes (ingest/raw-payload.ts, deeper than
 *   128), and a 3,000-deep one overflows the stack of the scrub, of JSON.stringify and of
 *   the page's tree: the whole event page answered 500. The levels below the cut are
 *   replaced by a string that says so.
 * - `findRequestEntry`: the request-log entry behind a `req_…` id (`webhook events` lists
 *   filtered requests by it), the same lookup `webhook event req_…` uses (re-exported).
 */

/** Levels of a payload the console shows: far beyond real webhooks, far below any stack limit. */
export const SHOWN_DEPTH = 64;

/** `value` with everything nested deeper than `maxDepth` replaced by a note (iterative: any depth is safe). */
export function bounded(value: unknown, maxDepth = SHOWN_DEPTH): unknown {
  if (value === null || typeof value !== 'object') return value;
  const root: { v: unknown } = { v: undefined };
  // Each job copies `source` into `holder[key]` at `depth`.
  const jobs: Array<{ source: unknown; holder: Record<string | number, unknown>; key: string | number; depth: number }> = [{ source: value, holder: root as Record<string, unknown>, key: 'v', depth: 0 }];
  while (jobs.length > 0) {
    const { source, holder, key, depth } = jobs.pop()!;
    if (source === null || typeof source !== 'object') {
      holder[key] = source;
      continue;
    }
    if (depth >= maxDepth) {
      holder[key] = `… nested deeper than ${maxDepth} levels: not shown here (hookagent webhook event shows the payload's fields through the prompt)`;
      continue;
    }
    if (Array.isArray(source)) {
      const copy: unknown[] = new Array(source.length);
      holder[key] = copy;
      source.forEach((item, i) => jobs.push({ source: item, holder: copy as unknown as Record<number, unknown>, key: i, depth: depth + 1 }));
    } else {
      const copy: Record<string, unknown> = {};
      holder[key] = copy;
      for (const [k, item] of Object.entries(source)) {
        // A key named __proto__ (valid JSON) must stay a plain own property.
        Object.defineProperty(copy, k, { value: undefined, writable: true, enumerable: true, configurable: true });
        jobs.push({ source: item, holder: copy, key: k, depth: depth + 1 });
      }
    }
  }
  return root.v;
}

export { findEventRequest, findRequestEntry, isRequestId } from '../webhook/request-entry';
