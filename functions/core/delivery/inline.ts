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
 * zero-width space; one wrongly read as code would notify.
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
 * are no autolinks: the page reads `<a@b>` as a tag and `<``@bob-->` as text.
 */
function scanInline(s: string, html: boolean, kinds: Uint8Array, base: number, units: Unit[]): void {
  const find = finder(s);
  const span = codeSpans(s);
  const unit = (i: number): { end: number; kind: number; raw: boolean } | undefined => {
    const close = (needle: string, from: number) => {
      const at = find(needle, from);
      return at < 0 ? undefined : { end: at + needle.length, kind: TEXT, raw: true };
    };
    if (s.startsWith('<!--', i)) return s[i + 4] === '>' || s.startsWith('->', i + 4) ? { end: i + (s[i + 4] === '>' ? 5 : 6), kind: TEXT, raw: true } : close('-->', i + 4);
    if (s.startsWith('<?', i)) return close('?>', i + 2);
    if (s.startsWith('<![CDATA[', i)) return close(']]>', i + 9);
    if (/^<![A-Za-z]/.test(s.slice(i, i + 3))) return close('>', i + 2);
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
 * host may cut it first, it is also read in the pieces it may be cut into, and a character
 * is code or a tag only if both readings say so: a table's cells (GFM), and the lines of a
 * paragraph that may start with a link reference definition, a footnote or a task item.
 */
export function inlineKinds(lines: readonly string[], html: boolean): { kinds: Uint8Array; units: [Unit[], Unit[]] } {
  const joined = lines.join('\n');
  const units: [Unit[], Unit[]] = [[], []];
  const whole = new Uint8Array(joined.length);
  scanInline(joined, html, whole, 0, units[0]);
  const table = !html && lines.slice(1).some((l) => l.includes('|') && DELIMITER_ROW.test(l));
  if (!table && (html || !/^ {0,3}\[/.test(lines[0] ?? ''))) return { kinds: whole, units: [units[0], units[0]] };
  const parts = new Uint8Array(joined.length);
  let at = 0;
  for (const line of lines) {
    for (const cell of table ? line.split(/(?<!\\)\|/) : [line]) {
      scanInline(cell, html, parts, at, units[1]);
      at += cell.length + 1;
    }
  }
  for (let i = 0; i < whole.length; i++) if (whole[i] !== parts[i]) whole[i] = TEXT;
  return { kinds: whole, units };
}

/** Where the HTML tokenizer is: in text, a comment, a bogus comment (`<?`, `<!X`: up to the next `>`) or a tag (in a value's quotes, or after its `=`). */
export interface Html {
  state: 'data' | 'comment' | 'bogus' | 'tag';
  tag?: { name: string; closing: boolean; quote?: string };
  /** An element whose content is raw text, open (`script`, `textarea`, …; `plaintext` never ends). */
  raw?: string;
  /** `<details>` not ended. */
  details: number;
}

const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'plaintext']);
const SPACE = /[\t\n\f\r ]/;

/** A tag ended: what it opens or closes. */
export function ended(h: Html): Html {
  const { name, closing } = h.tag as NonNullable<Html['tag']>;
  const details = name !== 'details' ? h.details : closing ? Math.max(0, h.details - 1) : h.details + 1;
  return { state: 'data', details, ...(!closing && RAW_TEXT.has(name) ? { raw: name } : {}) };
}

/** The tokenizer run on over `html` from `h`; `inTag` gets the ranges inside tags. */
export function tokenize(h: Html, html: string, inTag: (from: number, to: number) => void): Html {
  let tagFrom = 0;
  for (let i = 0; ;) {
    const data: Html = { state: 'data', details: h.details };
    if (h.raw || h.state === 'comment' || h.state === 'bogus') {
      const end = h.raw ? new RegExp(`</${h.raw}[\\t\\n\\f\\r />]`, 'ig') : h.state === 'comment' ? /--!?>/g : />/g;
      end.lastIndex = i;
      const found = h.raw === 'plaintext' ? null : end.exec(html);
      if (!found) return h;
      [h, i] = [data, found.index + (h.raw ? 0 : found[0].length)];
    } else if (h.state === 'tag') {
      // Attributes, up to the `>` that ends the tag: only a value's quotes hide one. `=`: a value is to come.
      const tag = h.tag as NonNullable<Html['tag']>;
      const open = (quote?: string): Html => (inTag(tagFrom, html.length), { ...h, tag: { name: tag.name, closing: tag.closing, ...(quote ? { quote } : {}) } });
      for (let quote = tag.quote; ;) {
        if (quote === '=') {
          while (SPACE.test(html[i] ?? '')) i += 1;
          if (i >= html.length) return open(quote);
          if (html[i] === '"' || html[i] === "'") quote = html[i++];
          else for (quote = undefined; i < html.length && !SPACE.test(html[i] as string) && html[i] !== '>';) i += 1;
        } else if (quote) {
          const close = html.indexOf(quote, i);
          if (close < 0) return open(quote);
          [i, quote] = [close + 1, undefined];
        } else {
          while (i < html.length && html[i] !== '>' && html[i] !== '=') i += 1;
          if (i >= html.length) return open();
          if (html[i] === '>') break;
          [i, quote] = [i + 1, '='];
        }
      }
      inTag(tagFrom, i + 1);
      [h, i] = [ended(h), i + 1];
    } else {
      const lt = html.indexOf('<', i);
      if (lt < 0) return h;
      i = lt + 1;
      const closing = html[i] === '/';
      const first = html[closing ? i + 1 : i] ?? '';
      if (html.startsWith('!--', i)) {
        // `<!-->` and `<!--->` end at once.
        i += html[i + 3] === '>' ? 4 : html.startsWith('->', i + 3) ? 5 : 3;
        if (i === lt + 4) h = { state: 'comment', details: h.details };
      } else if (/[A-Za-z]/.test(first)) {
        const from = closing ? i + 1 : i;
        for (i = from; i < html.length && !/[\t\n\f\r />]/.test(html[i] as string);) i += 1;
        [h, tagFrom] = [{ state: 'tag', tag: { name: html.slice(from, i).toLowerCase(), closing }, details: h.details }, lt];
      } else if (closing && first === '>') i += 2;
      else if (first === '!' || first === '?' || closing) h = { state: 'bogus', details: h.details };
    }
  }
}
