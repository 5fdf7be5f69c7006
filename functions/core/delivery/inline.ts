/**
 * The inline reading of Markdown text (mentions.ts), block by block (blocks.ts).
 *
 * Markdown: which characters are code spans, tags and autolinks, and which are text, left
 * to right as CommonMark reads: an autolink, raw HTML or a link's destination that starts
 * first wins over a backtick in it (`<https://x/`>`, and with GFM's autolinks
 * `https://x/`a`, open no code span); a code span runs over line breaks within its
 * paragraph. Where the host may cut a paragraph before it pairs backticks (GFM splits a
 * table row into cells; a link reference definition's lines are no part of the paragraph
 * after them), it is also read in those pieces, and a character is
 * code or a tag only if both readings say so. A mention wrongly read as text costs a
 * zero-width space; one wrongly read as code would notify. GitHub renders with cmark-gfm
 * (GFM 0.29), which reads comments and declarations more narrowly and refuses some code
 * spans (cmark's backtick memo): each of the readings above is made in its way too. GitLab
 * renders with comrak (glfm.ts): comments as CommonMark 0.31, declarations and code spans as
 * cmark, and math and wiki links, which take backticks first; an alert's title is plain text.
 *
 * HTML: Markdown hands HTML blocks and inline tags to the page as written and escapes the
 * rest; the page's HTML tokenizer (WHATWG "Tokenization", as far as these states go) reads
 * that raw HTML in order, and what it leaves open runs on: an unclosed `<!--` hides what
 * follows up to the next `-->`, `<?` and `<!X` up to the next `>`, a tag left in a quoted
 * value up to the next quote; `<script>`, `<textarea>` … take it as their text. Which tags
 * the page reads as tags, and what must be closed after a reply, follow from it.
 */

import { cmarkSpans, codeSpans, MAX_BACKTICKS } from './code-spans';
import { ALERT_TITLE, dollarMath, wikiLinkEnd } from './glfm';

export const TEXT = 0;
export const CODE = 1;
export const TAG = 2;
/** Autolinks, and open and closing tags, at a `<` (CommonMark's grammar: its whitespace is ASCII; a tag may run over line breaks). */
const AUTOLINK = /<(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\x00-\x20<>]*|[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)>/y;
const HTML_TAG = /<(?:[A-Za-z][A-Za-z0-9-]*(?:[ \t\n\v\f\r]+[A-Za-z_:][\w.:-]*(?:[ \t\n\v\f\r]*=[ \t\n\v\f\r]*(?:[^ \t\n\v\f\r"'=<>`]+|'[^']*'|"[^"]*"))?)*[ \t\n\v\f\r]*\/?|\/[A-Za-z][A-Za-z0-9-]*[ \t\n\v\f\r]*)>/y;
/** A GFM declaration's start (uppercase, then whitespace); CommonMark 0.31 takes any letter. */
const GFM_DECLARATION = /<![A-Z]+[ \t\n\v\f\r]/y;

/** Whose reading: commonmark.js (CommonMark 0.31), cmark-gfm (GitHub), comrak with GitLab's extensions. */
export type Flavour = 'commonmark' | 'gfm' | 'glfm';
/**
 * GFM's autolink extension (cmark-gfm; comrak for GitLab) links `scheme://…` and `www.…` as
 * the parser reaches their `:` or `w`, up to the next space or `<`: a backtick in them opens
 * no code span. Read liberally (any scheme and domain, in brackets too): the CommonMark
 * reading has no such links, so a code span is code only where both agree.
 */
const EXTENDED_AUTOLINK = /:\/\/[^ \t\n\v\f\r<]|(?<=^|[ \t\n\v\f\r*_~([])www\.[^ \t\n\v\f\r<]/y;
const URL_REST = /[^ \t\n\v\f\r<]*/y;
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
 * cmark-gfm reads (GFM 0.29 comments and declarations, cmark's code spans); `glfm`: as comrak
 * reads (0.31 comments, cmark's declarations and code spans, math: `` $`…`$ `` is code, `$…$`
 * text; wiki links: text).
 */
function scanInline(s: string, html: boolean, kinds: Uint8Array, base: number, units: Unit[], flavour: Flavour): void {
  const find = finder(s);
  const gfm = flavour !== 'commonmark';
  const glfm = flavour === 'glfm' && !html;
  const span = gfm ? cmarkSpans(s, MAX_BACKTICKS[flavour as 'gfm' | 'glfm']) : codeSpans(s);
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
    if (s.startsWith('<!--', i) && flavour === 'gfm') return gfmComment(i);
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
  // comrak: a `[` inside an open bracket starts no wiki link.
  let bracket = false;
  for (let i = 0; i < s.length;) {
    const c = s[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    EXTENDED_AUTOLINK.lastIndex = i;
    if (gfm && !html && (c === ':' || c === 'w') && i >= plain && EXTENDED_AUTOLINK.test(s)) {
      URL_REST.lastIndex = i;
      URL_REST.test(s);
      i = URL_REST.lastIndex;
      continue;
    }
    if (glfm && c === '$' && i >= plain) {
      const math = dollarMath(s, i);
      if ('text' in math) i += math.text;
      else {
        if (math.code) kinds.fill(CODE, base + i, base + math.end);
        i = math.end;
      }
      continue;
    }
    const wiki = glfm && c === '[' && !bracket && s[i + 1] === '[' ? wikiLinkEnd(s, i) : -1;
    if (wiki > 0) {
      i = wiki;
      continue;
    }
    if (c === '[') bracket = true;
    if (c === ']') bracket = false;
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
 * footnote or a task item; as GitLab reads an alert, its title line (plain text) and the
 * lines after it. Each is read in every flavour given, and a character is code or a tag only
 * if every reading says so. `units`: per flavour, the whole reading's and the pieces'; a
 * reading not made repeats the whole.
 */
export function inlineKinds(lines: readonly string[], html: boolean, flavours: readonly Flavour[] = ['commonmark', 'gfm']): { kinds: Uint8Array; units: Unit[][] } {
  const joined = lines.join('\n');
  const table = !html && lines.slice(1).some((l) => l.includes('|') && DELIMITER_ROW.test(l));
  const cut = table || (!html && /^ {0,3}\[/.test(lines[0] ?? ''));
  let kinds: Uint8Array | undefined;
  const units: Unit[][] = [];
  // In an HTML block the readings differ only in which comments are units, and those stay text.
  for (const flavour of flavours.map((f) => (html ? 'commonmark' : f))) {
    const alert = flavour === 'glfm' && ALERT_TITLE.test(lines[0] ?? '');
    for (const pieces of [false, true]) {
      if (pieces && !cut) {
        units.push(units[units.length - 1] as Unit[]);
        continue;
      }
      const mine = new Uint8Array(joined.length);
      const found: Unit[] = [];
      let at = 0;
      // An alert: its title line is not read (text), the lines after it are one paragraph.
      const parts = !pieces ? [joined] : alert ? [lines[0] as string, lines.slice(1).join('\n')] : lines;
      parts.forEach((part, k) => {
        for (const cell of table && pieces && !alert ? part.split(/(?<!\\)\|/) : [part]) {
          if (!(alert && pieces && k === 0)) scanInline(cell, html, mine, at, found, flavour);
          at += cell.length + 1;
        }
      });
      units.push(found);
      if (!kinds) kinds = mine;
      else for (let i = 0; i < kinds.length; i++) if (kinds[i] !== mine[i]) kinds[i] = TEXT;
    }
  }
  return { kinds: kinds as Uint8Array, units };
}
