/**
 * The inline reading of Markdown text (mentions.ts), block by block (blocks.ts).
 *
 * Markdown: which characters are code spans, tags and autolinks, and which are text, left
 * to right as CommonMark reads: an autolink, raw HTML or a link's destination that starts
 * first wins over a backtick in it (`<https://x/`>` opens no code span); a code span runs
 * over line breaks within its paragraph. Where the host may cut a paragraph before it pairs
 * backticks (GFM splits a table row into cells; a link reference definition's lines are no
 * part of the paragraph after them), it is also read in those pieces, and a character is
 * code or a tag only if both readings say so. A mention wrongly read as text costs a
 * zero-width space; one wrongly read as code would notify. GitHub renders with cmark-gfm
 * (GFM 0.29), which reads comments and declarations more narrowly and refuses some code
 * spans (cmark's backtick memo): each of the readings above is made in its way too.
 *
 * HTML: Markdown hands HTML blocks and inline tags to the page as written and escapes the
 * rest; the page's HTML tokenizer (WHATWG "Tokenization", as far as these states go) reads
 * that raw HTML in order, and what it leaves open runs on: an unclosed `<!--` hides what
 * follows up to the next `-->`, `<?` and `<!X` up to the next `>`, a tag left in a quoted
 * value up to the next quote; `<script>`, `<textarea>` … take it as their text. Which tags
 * the page reads as tags, and what must be closed after a reply, follow from it.
 */

export const TEXT = 0;
export const CODE = 1;
export const TAG = 2;
/** Autolinks, and open and closing tags, at a `<` (CommonMark's grammar: its whitespace is ASCII; a tag may run over line breaks). */
const AUTOLINK = /<(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\x00-\x20<>]*|[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)>/y;
const HTML_TAG = /<(?:[A-Za-z][A-Za-z0-9-]*(?:[ \t\n\v\f\r]+[A-Za-z_:][\w.:-]*(?:[ \t\n\v\f\r]*=[ \t\n\v\f\r]*(?:[^ \t\n\v\f\r"'=<>`]+|'[^']*'|"[^"]*"))?)*[ \t\n\v\f\r]*\/?|\/[A-Za-z][A-Za-z0-9-]*[ \t\n\v\f\r]*)>/y;
/** A GFM declaration's start (uppercase, then whitespace); CommonMark 0.31 takes any letter. */
const GFM_DECLARATION = /<![A-Z]+[ \t\n\v\f\r]/y;
/** cmark's longest backtick run looked for (MAXBACKTICKS). */
const MAX_BACKTICKS = 1000;
/** A link title after its destination, and the `)` that ends the link. */
const TITLE_END = /(?:\s+(?:"(?:[^"\\]|\\[^])*"|'(?:[^'\\]|\\[^])*'|\((?:[^()\\]|\\[^])*\)))?\s*\)/y;
/** A GFM table's delimiter row: its paragraph is read cell by cell too. */
const DELIMITER_ROW = /^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$/;

/** The first `needle` at or after `from` in `s` (-1: none); remembered per needle, so a scan whose `from` only grows stays linear. */
function finder(s: string): (needle: string, from: number) => number {
  const last = new Map<string, { from: number; at: number }>();
  return (needle, from) => {
    const seen = last.get(needle);
    if (seen && seen.from <= from && (seen.at < 0 || seen.at >= from)) return seen.at;
    const at = s.indexOf(needle, from);
    last.set(needle, { from, at });
    return at;
  };
}

/** Where the code span opened by the backtick run at `at` ends (-1: the run is literal text), from the runs of `s` by length. */
function codeSpans(s: string): (at: number) => { run: number; end: number } {
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
function cmarkSpans(s: string): (at: number) => { run: number; end: number } {
  const runs = [...s.matchAll(/`+/g)].map((m) => ({ at: m.index, length: m[0].length }));
  const last = new Map<number, number>();
  let scanned = false;
  let first = 0;
  return (at) => {
    let run = 0;
    while (s[at + run] === '`') run += 1;
    const from = at + run;
    if (run > MAX_BACKTICKS || (scanned && (last.get(run) ?? 0) <= from)) return { run, end: -1 };
    // Openers come left to right, so the runs before this one are never scanned again.
    while (first < runs.length && runs[first]!.at < from) first += 1;
    for (let k = first; k < runs.length; k++) {
      const { at: start, length } = runs[k]!;
      if (length <= MAX_BACKTICKS) last.set(length, start);
      if (length === run) return { run, end: start + run };
    }
    scanned = true;
    return { run, end: -1 };
  };
}

/** The end of an inline link's `(destination "title")` starting at `from` (after its `](`), or -1. */
function destinationEnd(s: string, from: number): number {
  let i = from;
  while (/\s/.test(s[i] ?? '')) i += 1;
  if (s[i] === '<') {
    while (i + 1 < s.length && !'<>\n'.includes(s[i + 1] as string)) i += s[i + 1] === '\\' ? 2 : 1;
    if (s[i + 1] !== '>') return -1;
    i += 2;
  } else {
    // Balanced parentheses, as deep as implementations follow them.
    for (let depth = 0; i < s.length && !/[\s\x00-\x1f]/.test(s[i] as string); i += s[i] === '\\' ? 2 : 1) {
      if (s[i] === '(' && ++depth > 32) return -1;
      if (s[i] === ')' && depth-- === 0) break;
    }
  }
  TITLE_END.lastIndex = i;
  return TITLE_END.test(s) ? TITLE_END.lastIndex : -1;
}

/**
 * One reading of inline text `s`: code spans marked CODE and tags and autolinks TAG in
 * `kinds` (from `base`), left to right as CommonMark reads; comments, processing
 * instructions and declarations are read as units but stay TEXT (what is in them shows
 * nowhere, and a host that reads them as text shows it). Each unit's range goes to `units`,
 * with whether it is raw HTML. In an HTML block (`html`) backticks are no code, and there
 * are no autolinks: the page reads `<a@b>` as a tag and `<``@bob-->` as text. `gfm`: as
 * cmark-gfm reads (GFM 0.29 comments and declarations, cmark's code spans).
 */
function scanInline(s: string, html: boolean, kinds: Uint8Array, base: number, units: Unit[], gfm: boolean): void {
  const find = finder(s);
  const span = gfm ? cmarkSpans(s) : codeSpans(s);
  /** GFM 0.29: `<!---->`, or text not starting with `>` or `->` and without `--` (so not ending in `-`). */
  const gfmComment = (i: number) => {
    if (s.startsWith('-->', i + 4)) return { end: i + 7, kind: TEXT, raw: true };
    if (s[i + 4] === '>' || s.startsWith('->', i + 4)) return undefined;
    const at = find('--', i + 4);
    return at >= 0 && s[at + 2] === '>' ? { end: at + 3, kind: TEXT, raw: true } : undefined;
  };
  const unit = (i: number): { end: number; kind: number; raw: boolean } | undefined => {
    const close = (needle: string, from: number) => {
      const at = find(needle, from);
      return at < 0 ? undefined : { end: at + needle.length, kind: TEXT, raw: true };
    };
    if (s.startsWith('<!--', i) && gfm) return gfmComment(i);
    if (s.startsWith('<!--', i)) return s[i + 4] === '>' || s.startsWith('->', i + 4) ? { end: i + (s[i + 4] === '>' ? 5 : 6), kind: TEXT, raw: true } : close('-->', i + 4);
    if (s.startsWith('<?', i)) return close('?>', i + 2);
    if (s.startsWith('<![CDATA[', i)) return close(']]>', i + 9);
    GFM_DECLARATION.lastIndex = i;
    if (/^<![A-Za-z]/.test(s.slice(i, i + 3))) return !gfm || GFM_DECLARATION.test(s) ? close('>', i + 2) : undefined;
    for (const re of html ? [HTML_TAG] : [AUTOLINK, HTML_TAG]) {
      re.lastIndex = i;
      if (re.test(s)) return { end: re.lastIndex, kind: TAG, raw: re === HTML_TAG };
    }
    return undefined;
  };
  let plain = -1;
  for (let i = 0; i < s.length;) {
    const c = s[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    const found = c === '<' ? unit(i) : undefined;
    if (found) {
      units.push({ from: base + i, to: base + found.end, raw: found.raw });
      kinds.fill(found.kind, base + i, base + found.end);
      i = found.end;
      continue;
    }
    // A backtick in what may be a link's destination or title opens no code span (a tag there is still read: the `](` may be text).
    if (c === ']' && !html && s[i + 1] === '(') plain = Math.max(plain, destinationEnd(s, i + 2));
    if (c === '`' && !html && i >= plain) {
      const { run, end } = span(i);
      if (end > 0) kinds.fill(CODE, base + i, base + end);
      i = end > 0 ? end : i + run;
      continue;
    }
    i += 1;
  }
}

/** A tag, autolink, comment … found by a reading, as a range of the block's text; `raw`: the page gets it as written. */
export interface Unit { from: number; to: number; raw: boolean }

/**
 * The kinds of a block's inline text (`lines`, read as one with `\n` between), and the
 * units each reading found. A paragraph is read as one, as CommonMark reads it; where the
 * host may cut it first, it is also read in the pieces it may be cut into: a table's cells
 * (GFM), and the lines of a paragraph that may start with a link reference definition, a
 * footnote or a task item. Each is read as commonmark.js and as cmark-gfm reads it, and a
 * character is code or a tag only if every reading says so. `units`: per reading, in the
 * order whole, pieces, whole (GFM), pieces (GFM); a reading not made repeats the whole.
 */
export function inlineKinds(lines: readonly string[], html: boolean): { kinds: Uint8Array; units: [Unit[], Unit[], Unit[], Unit[]] } {
  const joined = lines.join('\n');
  const table = !html && lines.slice(1).some((l) => l.includes('|') && DELIMITER_ROW.test(l));
  const cut = table || (!html && /^ {0,3}\[/.test(lines[0] ?? ''));
  let kinds: Uint8Array | undefined;
  const units: Unit[][] = [];
  // In an HTML block the readings differ only in which comments are units, and those stay text.
  for (const gfm of html ? [false, false] : [false, true]) {
    for (const pieces of [false, true]) {
      if (pieces && !cut) {
        units.push(units[units.length - 1] as Unit[]);
        continue;
      }
      const mine = new Uint8Array(joined.length);
      const found: Unit[] = [];
      let at = 0;
      for (const line of pieces ? lines : [joined]) {
        for (const cell of table && pieces ? line.split(/(?<!\\)\|/) : [line]) {
          scanInline(cell, html, mine, at, found, gfm);
          at += cell.length + 1;
        }
      }
      units.push(found);
      if (!kinds) kinds = mine;
      else for (let i = 0; i < kinds.length; i++) if (kinds[i] !== mine[i]) kinds[i] = TEXT;
    }
  }
  return { kinds: kinds as Uint8Array, units: units as [Unit[], Unit[], Unit[], Unit[]] };
}
