/**
 * GitLab Flavored Markdown (GLFM) where it reads otherwise than CommonMark and GFM. GitLab
 * renders a note with glfm_markdown, comrak with GitLab's options
 * (lib/banzai/filter/markdown_engines/glfm_markdown.rb), after pre-processing of its own:
 * - a leading BOM is deleted, front matter at the top (a `---`, `+++` or `;;;` line up to
 *   the next such line or `...`) becomes a ``` block (front_matter_filter.rb,
 *   lib/gitlab/front_matter.rb), and every `\r` is deleted (markdown_filter.rb): gitlabSource;
 * - a `>>>` line opens a multi-line block quote and the next one closes it, even inside a
 *   fence it holds; `>>> [!note]` opens a multi-line alert: multilineFence, ALERT;
 * - an alert's title (the rest of its `[!note]` line) is plain text: ALERT_TITLE;
 * - `: ` or `~ ` right after a paragraph line ends the paragraph (a description list);
 * - math (`$…$`, `$$…$$`, `` $`…`$ ``) and wiki links (`[[page]]`, `[[title|page]]`) take
 *   backticks before a code span can: dollarMath, wikiLinkEnd.
 * Each follows comrak's sources (src/parser/mod.rs, inlines.rs, scanners.re).
 */

/** A `>>>` fence line (3 or more `>`, then only spaces or tabs): its length, else 0. */
export const multilineFence = (rest: string): number => /^>{3,}(?=[ \t]*$)/.exec(rest)?.[0].length ?? 0;

/** An alert's first line, from its `>`s (comrak alert_start). */
export const ALERT = /^(>+) \[!(?:note|tip|important|warning|caution)\]/i;

/** A paragraph's first line that is an alert's title line, once its `>` is read. */
export const ALERT_TITLE = /^ {0,3}\[!(?:note|tip|important|warning|caution)\]/i;

/** A description's marker and the spaces after it (`: `, `~\t`), else 0. */
export const descriptionMarker = (rest: string): number => /^[:~][ \t]+/.exec(rest)?.[0].length ?? 0;

/** Text as GitLab's Markdown engine gets it, and where each of its characters came from (-1: added by GitLab). */
export interface Source { text: string; at: Int32Array }

const DELIMITERS = ['---', '+++', ';;;'];
const LANGUAGE: Record<string, string> = { '---': 'yaml', '+++': 'toml', ';;;': 'json' };
/** RE2's `\s`, which GitLab's front matter pattern uses. */
const RE2_SPACE = /[\t\n\f\r ]/;
/** Ruby's `\R` as GitLab spells it for RE2 (lib/gitlab/untrusted_regexp.rb); at `\r\n` it takes the `\r`. */
const LINE_BREAK = /[\n\v\f\r\x85\u2028\u2029]/;

/** A copied range of the text, or text GitLab adds. */
type Piece = readonly [from: number, to: number] | string;

/** Where a closing front matter line starting at `c` ends (after its line break), or -1. */
function closing(t: string, c: number): number {
  if (![...DELIMITERS, '...'].some((d) => t.startsWith(d, c))) return -1;
  let r = c + 3;
  while (r < t.length && ' \t\f'.includes(t[r] as string)) r += 1;
  if (r >= t.length) return r;
  if (LINE_BREAK.test(t[r] as string)) return r + 1;
  // Backtracking hands a form feed the spaces took to `\R`.
  const feed = t.lastIndexOf('\f', r - 1);
  return feed >= c + 3 ? feed + 1 : -1;
}

/** GitLab's front matter pattern anchored at `start` (RE2, multi-line, Perl's leftmost-first choices), made a fence. */
function frontMatter(t: string, start: number): { end: number; pieces: Piece[] } | undefined {
  for (const encoding of [true, false]) {
    let p = start;
    if (encoding) {
      const eol = t.slice(start).search(/[\r\n]/);
      if (eol < 0 || !t.slice(start, start + eol).includes('coding:')) continue;
      p = start + eol + 1;
    }
    let q = p;
    while (q < t.length && RE2_SPACE.test(t[q] as string)) q += 1;
    const delimiter = DELIMITERS.find((d) => t.startsWith(d, q));
    if (!delimiter || (q !== start && t[q - 1] !== '\n')) continue;
    let r = q + 3;
    while (t[r] === ' ' || t[r] === '\t') r += 1;
    const langFrom = r;
    while (r < t.length && !RE2_SPACE.test(t[r] as string)) r += 1;
    // `\S*` then `\R`: before a space or the end, backtracking hands `\R` a line break `\S*` took (`\v`, U+2028 …).
    if (r >= t.length || !LINE_BREAK.test(t[r] as string)) {
      while (r > langFrom && !/[\v\x85\u2028\u2029]/.test(t[r - 1] as string)) r -= 1;
      if (r === langFrom) continue;
      r -= 1;
    }
    const lang = t.slice(langFrom, r) || LANGUAGE[delimiter];
    for (let c = r + 1; c <= t.length; c++) {
      const end = t[c - 1] === '\n' ? closing(t, c) : -1;
      if (end >= 0) return { end, pieces: [encoding ? '\n' : '', [p, q], `\`\`\`${lang}:frontmatter\n`, [r + 1, c], '```\n'] };
    }
  }
  return undefined;
}

/** `text` as comrak gets it from GitLab: BOM deleted, front matter made fences (as often as it follows itself), every `\r` deleted. */
export function gitlabSource(text: string): Source {
  const pieces: Piece[] = [];
  let at = text.startsWith('\ufeff') ? 1 : 0;
  for (let m = frontMatter(text, at); m; m = frontMatter(text, at)) {
    pieces.push(...m.pieces);
    at = m.end;
  }
  pieces.push([at, text.length]);
  const chars: string[] = [];
  const from: number[] = [];
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      chars.push(piece);
      for (let i = 0; i < piece.length; i++) from.push(-1);
      continue;
    }
    for (let i = piece[0]; i < piece[1]; i++) {
      if (text[i] === '\r') continue;
      chars.push(text[i] as string);
      from.push(i);
    }
  }
  return { text: chars.join(''), at: Int32Array.from(from) };
}

/** cmark's whitespace (isspace). */
const CMARK_SPACE = /[ \t\n\v\f\r]/;

/**
 * At a `$` run in `s`: the end of the math it opens and whether it is code math
 * (`` $`…`$ ``), or how many `$` are plain text (comrak handle_dollars: pandoc's rules, no
 * space inside an inline one's ends, no digit after its closing `$`).
 */
export function dollarMath(s: string, at: number): { end: number; code: boolean } | { text: number } {
  let n = 0;
  while (s[at + n] === '$') n += 1;
  if (n === 1 && s[at + 1] === '`') {
    for (let p = at + 2, q = s.indexOf('$', p); q >= 0; p = q + 1, q = s.indexOf('$', p)) {
      if (s[q - 1] === '`') return q + 1 - at >= 5 ? { end: q + 1, code: true } : { text: 1 };
    }
    return { text: 1 };
  }
  if (n > 2 || (n === 1 && CMARK_SPACE.test(s[at + 1] ?? ''))) return { text: n };
  for (let p = at + n; ;) {
    const q = s.indexOf('$', p);
    if (q < 0) return { text: n };
    const before = s[q - 1] as string;
    if (n === 1 && CMARK_SPACE.test(before)) return { text: n };
    if (n === 1 && before === '\\') {
      p = q + 1;
      continue;
    }
    let k = 0;
    while (k < n && s[q + k] === '$') k += 1;
    p = q + k;
    if (n === 1 && /[0-9]/.test(s[p] ?? '')) return { text: n };
    if (k === n) return p - at >= 2 * n + 1 ? { end: p, code: false } : { text: n };
  }
}

/** comrak's link label limit, which bounds a wiki link's parts. */
const MAX_LABEL = 1000;

/** At `[[` in `s`: the end of the wiki link it opens, or -1 (comrak handle_wikilink: `[[page]]` or `[[title|page]]`). */
export function wikiLinkEnd(s: string, at: number): number {
  let i = at + 1;
  /** One part, from the `[` or `|` before it up to the next `[`, `]` or `|` (a backslash escapes punctuation). */
  const part = (): boolean => {
    const start = i;
    i += 1;
    for (let length = 0; i < s.length && !'[]|'.includes(s[i] as string);) {
      const step = s[i] === '\\' && /[!-/:-@[-`{-~]/.test(s[i + 1] ?? '') ? 2 : 1;
      i += step;
      length += step;
      if (length > MAX_LABEL) {
        i = start;
        return false;
      }
    }
    return true;
  };
  if (!part()) return -1;
  if (s.startsWith(']]', i)) return i + 2;
  if (s[i] !== '|' || !part()) return -1;
  return s.startsWith(']]', i) ? i + 2 : -1;
}
