/**
 * Where a transcript is kept: inline in `EventRecord.transcript_ref` (its JSON) when small,
 * else in the PayloadStore under `transcript_<event>_<subscription>_r<runs>` with the pointer
 * kept. One key per number of runs, never the key the record points to now: the object is
 * written before the record, and a crash in between must leave the committed record's
 * transcript as it was (before, one fixed key was overwritten, and the record then showed a
 * run its usage never counted). A run that crashed is overwritten by the retry that replaces it.
 */
import type { PayloadStore } from '../ports';
import type { Transcript } from './run-record';

/** Transcripts up to this size (JSON characters) stay in the event record. */
export const INLINE_TRANSCRIPT_CAP = 8 * 1024;

export async function storeTranscript(payloads: PayloadStore, eventId: string, subscription: string, transcript: Transcript): Promise<string> {
  const json = JSON.stringify(transcript);
  if (json.length <= INLINE_TRANSCRIPT_CAP) return json;
  const runs = 1 + (transcript.earlier?.length ?? 0);
  return payloads.put(`transcript_${eventId}_${subscription}_r${runs}`.replace(/[^A-Za-z0-9_-]/g, '_'), json);
}

/** The transcript a record points to, or undefined when it has none. */
export async function loadTranscript(payloads: PayloadStore, ref: string | undefined): Promise<Transcript | undefined> {
  if (!ref) return undefined;
  const json = ref.startsWith('{') ? ref : await payloads.get(ref);
  return JSON.parse(json) as Transcript;
}
