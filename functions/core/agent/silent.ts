/**
 * [SILENT] (DESIGN §2.4): the reply, trimmed, begins with `[SILENT]` (any case), or its
 * first or last line is exactly `[SILENT]`. A mention inside a sentence is delivered.
 */
const MARKER = '[silent]';

export function isSilent(reply: string): boolean {
  const trimmed = reply.trim();
  if (trimmed.toLowerCase().startsWith(MARKER)) return true;
  const lines = trimmed.split(/\r?\n/).map((line) => line.trim());
  const first = lines[0] ?? '';
  const last = lines[lines.length - 1] ?? '';
  return first.toLowerCase() === MARKER || last.toLowerCase() === MARKER;
}
