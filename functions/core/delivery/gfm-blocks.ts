/**
 * Two block readings of one text made one (blocks.ts): commonmark.js's and cmark-gfm's
 * (GitHub). Where they put a line in another kind of block, start its content elsewhere or
 * cut its paragraph elsewhere, no reading can be trusted there: such lines, with every
 * block of either reading they share, are read as text with no code in it (kind `html`:
 * no code spans, no autolinks, no backslash escapes; a misread line costs a zero-width
 * space, never a live mention). So are the lines both read as code where GitLab reads text
 * (`unsure` given: glfm-reading.ts). Lines all readings agree on keep their block.
 */
import type { BlockLine, BlockReading, OpenBlocks, OpenFence } from './blocks';

/** Whether line `i` and the one before it are in one block of `lines`. */
const joined = (lines: readonly BlockLine[], i: number) => i > 0 && lines[i]!.block === lines[i - 1]!.block;

/** Marks every line of a block that holds a marked line, in each reading, until nothing changes. */
function spread(unsure: Uint8Array, readings: readonly (readonly BlockLine[])[]): void {
  for (let changed = true; changed;) {
    changed = false;
    for (const lines of readings) {
      for (let i = 1; i < lines.length; i++) {
        if (joined(lines, i) && unsure[i] !== unsure[i - 1]) [unsure[i], unsure[i - 1], changed] = [1, 1, true];
      }
      for (let i = lines.length - 1; i > 0; i--) {
        if (joined(lines, i) && unsure[i] !== unsure[i - 1]) [unsure[i], unsure[i - 1], changed] = [1, 1, true];
      }
    }
  }
}

/** What a reading leaves open at the end. */
type Ends = Pick<BlockReading, 'fence' | 'html'>;

/**
 * The lines both readings agree on, the rest read as text; the fences any reading leaves
 * open (GitLab's too: `gitlab`), and the HTML block the first that leaves one open leaves.
 */
export function intersectBlocks(common: BlockReading, gfm: BlockReading, seed?: Uint8Array, gitlab?: Ends): { lines: BlockLine[]; open: OpenBlocks } {
  const [a, b] = [common.lines, gfm.lines];
  const unsure = seed ?? new Uint8Array(a.length);
  a.forEach((x, i) => {
    const y = b[i] as BlockLine;
    if (x.kind !== y.kind || x.from !== y.from || joined(a, i) !== joined(b, i)) unsure[i] = 1;
  });
  spread(unsure, [a, b]);
  // A run of lines read as text is one block of its own (ids below 0 are no reading's).
  let runs = 0;
  const lines = a.map((x, i): BlockLine => {
    if (!unsure[i]) return x;
    if (i === 0 || !unsure[i - 1]) runs += 1;
    return { from: Math.min(x.from, b[i]!.from), kind: 'html', block: -runs };
  });
  const ends: Ends[] = [common, gfm, ...(gitlab ? [gitlab] : [])];
  const key = (f: OpenFence) => `${f.prefix}\n${f.marker}`;
  const open = new Map(ends.flatMap((r) => (r.fence ? [[key(r.fence), r.fence] as const] : [])));
  // A bare closer closes the fence where it is open and is inert where an HTML block is: that runs on over any line up to its own end.
  const fences = [...open].map(([k, fence]) => ({ ...fence, bare: ends.every((r) => (r.fence && key(r.fence) === k) || r.html !== undefined) }));
  const html = common.html ?? gfm.html ?? gitlab?.html;
  return { lines, open: { fences, ...(html ? { html } : {}) } };
}
