/**
 * Where a code span ends (inline.ts): as commonmark.js pairs backtick runs, and as cmark
 * (GitHub's cmark-gfm) and comrak (GitLab) do, which refuse some spans by their backtick memo.
 */

/** The longest backtick run cmark (MAXBACKTICKS) and comrak look for. */
export const MAX_BACKTICKS = { gfm: 1000, glfm: 80 };

/** Where the code span opened by the backtick run at `at` ends (-1: the run is literal text), from the runs of `s` by length. */
export function codeSpans(s: string): (at: number) => { run: number; end: number } {
  const byLength = new Map<number, number[]>();
  for (const m of s.matchAll(/`+/g)) {
    const starts = byLength.get(m[0].length) ?? [];
    starts.push(m.index);
    byLength.set(m[0].length, starts);
  }
  return (at) => {
    let run = 0;
    while (s[at + run] === '`') run += 1;
    const starts = byLength.get(run) ?? [];
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((starts[mid] as number) < at + run) lo = mid + 1;
      else hi = mid;
    }
    return { run, end: lo < starts.length ? (starts[lo] as number) + run : -1 };
  };
}

/**
 * Code spans as cmark finds them (inlines.c scan_to_closing_backticks): each scan notes the
 * last run of each length it passed, and once a scan has reached the end without a closer,
 * an opener is refused when the last run noted for its length is at or before it (a later
 * shorter scan may have noted an earlier one: `` `` `a` `b` `` leaves `b` text).
 */
export function cmarkSpans(s: string, max: number): (at: number) => { run: number; end: number } {
  const runs = [...s.matchAll(/`+/g)].map((m) => ({ at: m.index, length: m[0].length }));
  const last = new Map<number, number>();
  let scanned = false;
  let first = 0;
  return (at) => {
    let run = 0;
    while (s[at + run] === '`') run += 1;
    const from = at + run;
    if (run > max || (scanned && (last.get(run) ?? 0) <= from)) return { run, end: -1 };
    // Openers come left to right, so the runs before this one are never scanned again.
    while (first < runs.length && runs[first]!.at < from) first += 1;
    for (let k = first; k < runs.length; k++) {
      const { at: start, length } = runs[k]!;
      if (length <= max) last.set(length, start);
      if (length === run) return { run, end: start + run };
    }
    scanned = true;
    return { run, end: -1 };
  };
}
