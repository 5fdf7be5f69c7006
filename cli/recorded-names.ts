/**
 * The subscription names the event log holds records under: the ones defined now and the
 * deleted ones, whose records stay until they expire (14 days). What a list or a sum over
 * the whole log walks; `note` says what it cannot promise (a store that cannot list the
 * names of deleted subscriptions, or is still looking for them).
 *
 * A store may find the deleted names a step per call (DynamoDB: one page of a scan, which
 * the console carries on with each refresh). `complete` (a one-shot command, whose next call
 * would be another process starting over) asks again until the answer is complete: each call
 * reads further, and the scan reads only the `subscription` attribute.
 */
import type { EventLog } from '../functions/core/ports';

export async function recordedNames(events: EventLog, defined: string[], options: { complete?: boolean } = {}): Promise<{ names: string[]; note?: string }> {
  if (!events.recordedSubscriptions) {
    return { names: defined, note: "This store cannot list the names of deleted subscriptions: their events are not listed (they still open by id)" };
  }
  try {
    let recorded = await events.recordedSubscriptions(defined);
    while (options.complete && recorded.incomplete) recorded = await events.recordedSubscriptions(defined);
    return { names: recorded.names, ...(recorded.incomplete ? { note: recorded.incomplete } : {}) };
  } catch (error) {
    // E.g. credentials that may Query but not Scan: the defined subscriptions' events still list.
    return { names: defined, note: `Could not look up the names of deleted subscriptions (${error instanceof Error ? error.message : String(error)}): their events are not listed` };
  }
}
