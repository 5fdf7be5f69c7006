/**
 * A release moves subjects' latest-event pointers off the held events it ended (hunt 13).
 * Ingest records a held event of a debounced subscription as its subject's latest
 * (ingest/debounce.ts, heldPointers). When a release ends the later events of a held burst
 * (suppressed: `update` made the subscription stop taking them; failed: accepted for a
 * deleted subscription) and releases an earlier one, the pointer still names an ended
 * event, and the worker's gate would record the released one `superseded` by it: nothing
 * of the burst would run. So each such subject is pointed at the event released, only
 * while its pointer still names an event the release ended: an event accepted since (after
 * the resume) stays the latest. An earlier event still waiting out its window in the queue
 * is then superseded by the released one, as it would have been without the pause.
 */
import type { DebounceStore } from '../ports';
import type { EventRecord } from '../types';
import { DEBOUNCE_TTL_SECONDS } from '../worker/gates';

/** Point `subscription`'s subject `subjectKey` at `eventId` (released), while it names one of `ended`. */
export interface Repoint {
  subscription: string;
  subjectKey: string;
  eventId: string;
  ended: string[];
}

/** A debounce store that moves a pointer only while it names one of `ended`; true when it moved it. */
export interface RepointingStore {
  replaceLatest(subscription: string, subjectKey: string, eventId: string, ended: readonly string[], ttlSeconds: number): Promise<boolean>;
}

/**
 * A release that moves the pointers in the same write as it queues the records (the local
 * store). The AtomicRelease port fits it (and then moves none).
 */
export interface RepointingRelease {
  releaseHeld(records: EventRecord[], at: string, repoint?: readonly Repoint[]): Promise<EventRecord[]>;
}

/** Those of `repoint` that point at one of `records`. */
export function repointsFor(repoint: readonly Repoint[], records: readonly Pick<EventRecord, 'event_id' | 'subscription'>[]): Repoint[] {
  const ids = new Set(records.map((r) => `${r.event_id}\u0000${r.subscription}`));
  return repoint.filter((p) => ids.has(`${p.eventId}\u0000${p.subscription}`));
}

/**
 * Moves the pointers before the released records' messages are sent (where the release is
 * not one write): sent first, a message could reach the worker while its subject still
 * names the ended event. A store that cannot move them conditionally moves none.
 */
export async function repointLatest(store: (DebounceStore & Partial<RepointingStore>) | undefined, repoint: readonly Repoint[]): Promise<void> {
  if (!store?.replaceLatest) return;
  for (const p of repoint) await store.replaceLatest(p.subscription, p.subjectKey, p.eventId, p.ended, DEBOUNCE_TTL_SECONDS);
}
