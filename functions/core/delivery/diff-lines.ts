/**
 * The lines of a unified-diff patch a finding may point at, per side, with what placing it
 * needs: the hunk each line is in (a multi-line finding must lie within one), whether it is
 * a context line, and its number on the other side as GitLab's diff parser counts it (its
 * line codes, `<sha1 of path>_<old>_<new>`, give an added line the old side's next number,
 * a removed line the new side's).
 */

export interface DiffLine {
  /** The hunk's index in the patch. */
  hunk: number;
  old: number;
  new: number;
  kind: 'added' | 'removed' | 'context';
}

/** RIGHT: added and context lines by new number; LEFT: removed and context lines by old number. */
export interface DiffLines { RIGHT: Map<number, DiffLine>; LEFT: Map<number, DiffLine> }

export function commentableLines(patch: string | undefined): DiffLines {
  const lines: DiffLines = { RIGHT: new Map(), LEFT: new Map() };
  if (!patch) return lines;
  let oldLine = 0;
  let newLine = 0;
  let hunkIndex = -1;
  // What is left of the hunk on each side (its header's counts, 1 when omitted): past
  // them a line is not the hunk's, such as the empty piece after GitLab's final newline.
  let oldLeft = 0;
  let newLeft = 0;
  for (const raw of patch.split('\n')) {
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(raw);
    if (hunk) {
      hunkIndex += 1;
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[3]);
      oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      newLeft = hunk[4] === undefined ? 1 : Number(hunk[4]);
      continue;
    }
    if (raw.startsWith('\\')) continue;
    // Read before the counters move on: a line's numbers are those at it.
    const at = (kind: DiffLine['kind']): DiffLine => ({ hunk: hunkIndex, old: oldLine, new: newLine, kind });
    if (raw.startsWith('+')) {
      if (newLeft <= 0) continue;
      newLeft -= 1;
      const line = at('added');
      lines.RIGHT.set(newLine++, line);
    } else if (raw.startsWith('-')) {
      if (oldLeft <= 0) continue;
      oldLeft -= 1;
      const line = at('removed');
      lines.LEFT.set(oldLine++, line);
    } else {
      if (oldLeft <= 0 || newLeft <= 0) continue;
      oldLeft -= 1;
      newLeft -= 1;
      const line = at('context');
      lines.RIGHT.set(newLine++, line);
      lines.LEFT.set(oldLine++, line);
    }
  }
  return lines;
}
