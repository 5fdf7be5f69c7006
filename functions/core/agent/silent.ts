/**
 * [SILENT] (DESIGN §2.4): the reply, trimmed, begins with `[SILENT]` (any case), or its
 * first or last line is exactly `[SILENT]`. A mention inside a sentence is delivered.
 */
import { splitFindings } from '../delivery/findings';

const MARKER = '[silent]';

export function isSilent(reply: string): boolean {
  // Judged on the model's text: the hidden findings block in front (findings.ts) is not part of it.
  const trimmed = splitFindings(reply).text.trim();
  if (trimmed.slice(0, MARKER.length).toLowerCase() === MARKER) return true;
  // Only the last line can still say it (a first line that does begins the reply): no split of a long reply.
  const last = trimmed.slice(trimmed.lastIndexOf('\n') + 1).trim();
  return last.length === MARKER.length && last.toLowerCase() === MARKER;
}
