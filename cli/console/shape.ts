/**
 * Shapes what the console sends the page so that every part of it can be shown.
 * - `bounded`: a payload (or transcript) nested deeper than the console walks is cut at
 *   that depth. Ingest keeps such payloads as raw bytes (ingest/raw-payload.ts, deeper than
 *   128), and a 3,000-deep one overflows the stack of the scrub, of JSON.stringify and of
 *   the page's tree: the whole event page answered 500. The levels below the cut are
 *   replaced by a string that says so.
 * - `findRequestEntry`: the request-log entry behind a `req_…` id (`webhook events` lists
 *   filtered requests by it), read as `webhook event req_…` reads it (cli/webhook/request-entry.ts).
 */
import type { RequestLog } from '../../functions/core/ports';
import type { RequestRecord } from '../../functions/core/types';

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

/** `req_` + 9 base-36 digits of the receive time in ms + a sequence and a process tag (ingest/request-log.ts). */
const REQUEST_ID = /^req_([0-9a-z]{9})[0-9a-z]{4,}$/;

/** Entries received at or after the id's time that the lookup reads through at most (as `webhook event`). */
const SCAN_LIMIT = 10_000;

export const isRequestId = (id: string): boolean => id.startsWith('req_');

/** The entry with this id; undefined when it is not (or no longer) in the request log, or the store has none. */
export async function findRequestEntry(requests: RequestLog | undefined, id: string): Promise<RequestRecord | undefined> {
  const time = REQUEST_ID.exec(id)?.[1];
  if (!requests || time === undefined) return undefined;
  const entries = await requests.list({ since: parseInt(time, 36), limit: SCAN_LIMIT });
  return entries.find((entry) => entry.request_id === id);
}
