/**
 * The block structure of Markdown text as CommonMark (GitHub's and GitLab's Markdown) reads
 * it: block quotes and list items (containers) holding fenced code, HTML blocks, indented
 * code and paragraphs. A line read on its own misses the containers: `> <!--` or `- <!--`
 * opens an HTML block (its comment then hides everything up to the next `-->`), and a fence
 * opened in a list item ends with the item, so the lines after it are text again. What the
 * inline reading (inline.ts) and the closers after a reply (mentions.ts) need: for each line,
 * where its content starts once the container prefixes are stripped, which kind of block
 * holds it and which block (a paragraph's lines share one); and what is still open at the
 * end. Follows commonmark.js (lib/blocks.js) line by line; a tab advances to the next
 * multiple of 4.
 */

/** `code`: a fence or a line in one; `indented`: indented code (read as text by mentions.ts: a misjudged one costs a space, not a mention). */
export type BlockKind = 'text' | 'html' | 'code' | 'indented' | 'blank';

/** A line: where its content starts after the container prefixes, its kind, and its block (a paragraph's lines share one). */
export interface BlockLine { from: number; kind: BlockKind; block: number }

export interface OpenBlocks {
  /** A fence still open, and the prefix that puts a line in its containers (`> `, an item's indentation). */
  fence?: { marker: string; prefix: string };
  /** An HTML block of type 1 to 5 still open outside any container: it runs on until its own end. */
  html?: { type: number; name: string };
}

interface Container { quote: boolean; width: number; empty: boolean }
interface Leaf { kind: 'para' | 'fence' | 'indented' | 'html'; block: number; ch?: string; length?: number; type?: number; name?: string }

const CODE_INDENT = 4;
const FENCE = /^`{3,}(?!.*`)|^~{3,}/;
const CLOSING_FENCE = /^(?:`{3,}|~{3,})(?=[ \t]*$)/;
const ATX = /^#{1,6}(?:[ \t]+|$)/;
const SETEXT = /^(?:=+|-+)[ \t]*$/;
const THEMATIC = /^(?:\*[ \t]*){3,}$|^(?:_[ \t]*){3,}$|^(?:-[ \t]*){3,}$/;
const BULLET = /^[*+-]/;
const ORDERED = /^(\d{1,9})([.)])/;
const ATTRIBUTE = String.raw`(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>\x60]+|'[^']*'|"[^"]*"))?)`;
/** HTML block starts, types 1 to 7 (CommonMark 0.31; `source`, type 6 in GitHub's older list, too). */
const HTML_OPEN = [
  /^<(script|pre|textarea|style)(?:\s|>|$)/i,
  /^<!--/,
  /^<[?]/,
  /^<![A-Za-z]/,
  /^<!\[CDATA\[/,
  /^<[/]?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|source|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul)(?:\s|[/]?[>]|$)/i,
  new RegExp(String.raw`^(?:<[A-Za-z][A-Za-z0-9-]*${ATTRIBUTE}*\s*/?>|</[A-Za-z][A-Za-z0-9-]*\s*>)\s*$`),
];
/** Where HTML blocks of types 1 to 5 end (on the line that matches); 6 and 7 end at a blank line. */
const HTML_CLOSE = [/<\/(?:script|pre|textarea|style)>/i, /-->/, /\?>/, />/, /\]\]>/];

const spaceOrTab = (c: string | undefined) => c === ' ' || c === '\t';

/** One line being read: the position and column reached, as commonmark.js tracks them. */
class Cursor {
  offset = 0;
  column = 0;
  next = 0;
  nextColumn = 0;
  constructor(readonly line: string) {}
  get indent(): number { return this.nextColumn - this.column; }
  get blank(): boolean { return this.next >= this.line.length; }
  get rest(): string { return this.line.slice(this.next); }
  findNext(): void {
    let i = this.offset;
    let cols = this.column;
    for (let c = this.line[i]; c === ' ' || c === '\t'; c = this.line[++i]) cols += c === ' ' ? 1 : 4 - (cols % 4);
    this.next = i;
    this.nextColumn = cols;
  }
  toNext(): void {
    this.offset = this.next;
    this.column = this.nextColumn;
  }
  /** Advances `count` characters, or columns (a tab then may be only partly consumed). */
  advance(count: number, columns: boolean): void {
    for (let c = this.line[this.offset]; count > 0 && c !== undefined; c = this.line[this.offset]) {
      const toTab = c === '\t' ? 4 - (this.column % 4) : 1;
      const step = columns ? Math.min(toTab, count) : toTab;
      this.column += step;
      if (step === toTab) this.offset += 1;
      count -= columns ? step : 1;
    }
  }
  /** Past a block quote's `>` and the one space or tab column after it. */
  pastQuote(): void {
    this.toNext();
    this.advance(1, false);
    if (spaceOrTab(this.line[this.offset])) this.advance(1, true);
  }
}


/** A list marker at the cursor (commonmark.js parseListMarker): the item's content width, the cursor moved past marker and padding. */
function listMarker(cur: Cursor, interrupting: boolean): number | undefined {
  if (cur.indent >= CODE_INDENT) return undefined;
  const rest = cur.rest;
  const ordered = ORDERED.exec(rest);
  const marker = BULLET.exec(rest)?.[0] ?? (ordered && (!interrupting || ordered[1] === '1') ? ordered[0] : undefined);
  if (marker === undefined) return undefined;
  const after = rest[marker.length];
  if (after !== undefined && !spaceOrTab(after)) return undefined;
  if (interrupting && rest.slice(marker.length).trim() === '') return undefined;
  const markerOffset = cur.indent;
  cur.toNext();
  cur.advance(marker.length, true);
  const startColumn = cur.column;
  const startOffset = cur.offset;
  do cur.advance(1, true);
  while (cur.column - startColumn < 5 && spaceOrTab(cur.line[cur.offset]));
  const spaces = cur.column - startColumn;
  if (spaces >= 5 || spaces < 1 || cur.offset >= cur.line.length) {
    cur.column = startColumn;
    cur.offset = startOffset;
    if (spaceOrTab(cur.line[cur.offset])) cur.advance(1, true);
    return markerOffset + marker.length + 1;
  }
  return markerOffset + marker.length + spaces;
}

/** The block structure of `lines` (split at every line ending: `\r\n`, `\r` or `\n`). */
export function readBlocks(lines: readonly string[]): { lines: BlockLine[]; open: OpenBlocks } {
  const open: Container[] = [];
  let leaf: Leaf | undefined;
  let blocks = 0;
  // The open containers before this index hold a block already (an item's `empty` matters on a blank line).
  let filled = 0;
  const out: BlockLine[] = [];
  for (const line of lines) {
    const cur = new Cursor(line);
    // Which open containers this line continues, then whether their leaf goes on.
    let matched = 0;
    for (const c of open) {
      cur.findNext();
      if (c.quote && cur.indent < CODE_INDENT && line[cur.next] === '>') cur.pastQuote();
      else if (!c.quote && cur.blank && !c.empty) cur.toNext();
      else if (!c.quote && !cur.blank && cur.indent >= c.width) cur.advance(c.width, true);
      else break;
      matched += 1;
    }
    cur.findNext();
    let leafMatched = false;
    if (leaf && matched === open.length) {
      const closing = leaf.kind === 'fence' && cur.indent <= 3 && line[cur.next] === leaf.ch ? CLOSING_FENCE.exec(cur.rest) : null;
      if (closing && closing[0].length >= (leaf.length as number)) {
        out.push({ from: cur.next, kind: 'code', block: leaf.block });
        leaf = undefined;
        continue;
      }
      if (leaf.kind === 'para') leafMatched = !cur.blank;
      else if (leaf.kind === 'html') leafMatched = !(cur.blank && (leaf.type as number) >= 6);
      else leafMatched = leaf.kind === 'fence' || cur.blank || cur.indent >= CODE_INDENT;
    }
    let closed = matched === open.length && (leaf === undefined || leafMatched);
    const closeUnmatched = () => {
      if (!closed) [open.length, leaf, closed, filled] = [matched, leafMatched ? leaf : undefined, true, Math.min(filled, matched)];
    };
    /** A new block here: what is not continued closes, and so does a paragraph (it holds no block). */
    const start = (next?: Leaf) => {
      closeUnmatched();
      [leaf, leafMatched] = [next, next !== undefined];
      for (; filled < open.length; filled++) (open[filled] as Container).empty = false;
    };
    let kind: BlockKind | undefined;
    let from = cur.offset;
    // New containers and leaves (commonmark.js blockStarts, in its order).
    while (!(leafMatched && leaf?.kind !== 'para')) {
      cur.findNext();
      const paragraph = leafMatched && leaf?.kind === 'para';
      const indented = cur.indent >= CODE_INDENT;
      const rest = cur.rest;
      if (!indented && rest[0] === '>') {
        start();
        cur.pastQuote();
        open.push({ quote: true, width: 0, empty: true });
        matched = open.length;
        continue;
      }
      // Headings and thematic breaks: one line each (their first characters start no fence or HTML block).
      if (!indented && (ATX.test(rest) || (paragraph && SETEXT.test(rest)) || THEMATIC.test(rest))) {
        start();
        [kind, from] = ['text', cur.next];
        break;
      }
      const fence = indented ? null : FENCE.exec(rest);
      const lazyParagraph = !closed && !cur.blank && leaf?.kind === 'para';
      const type = indented || rest[0] !== '<' ? -1 : HTML_OPEN.findIndex((re, i) => re.test(rest) && (i < 6 || !(paragraph || lazyParagraph)));
      if (fence || type >= 0) {
        start(fence ? { kind: 'fence', block: ++blocks, ch: fence[0][0], length: fence[0].length } : { kind: 'html', block: ++blocks, type: type + 1, name: (HTML_OPEN[0]!.exec(rest)?.[1] ?? 'pre').toLowerCase() });
        [kind, from] = fence ? ['code', cur.next] : ['html', cur.offset];
        break;
      }
      const probe = Object.assign(new Cursor(line), cur);
      const width = listMarker(probe, paragraph);
      if (width !== undefined) {
        start();
        Object.assign(cur, probe);
        open.push({ quote: false, width, empty: true });
        matched = open.length;
        continue;
      }
      if (indented && leaf?.kind !== 'para' && !cur.blank) {
        cur.advance(CODE_INDENT, true);
        start({ kind: 'indented', block: ++blocks });
        [kind, from] = ['indented', cur.offset];
        break;
      }
      cur.toNext();
      break;
    }
    if (!closed && !cur.blank && leaf?.kind === 'para' && kind === undefined) {
      // A lazy continuation line: the paragraph goes on although its containers did not match.
      out.push({ from: cur.offset, kind: 'text', block: leaf.block });
      continue;
    }
    closeUnmatched();
    if (kind === 'text') out.push({ from, kind, block: ++blocks });
    else if (leaf && leafMatched) {
      out.push({ from: kind ? from : cur.offset, kind: kind ?? (leaf.kind === 'para' ? 'text' : leaf.kind === 'fence' ? 'code' : leaf.kind), block: leaf.block });
      if (leaf.kind === 'html' && (leaf.type as number) <= 5 && HTML_CLOSE[(leaf.type as number) - 1]!.test(line.slice(cur.offset))) leaf = undefined;
    } else if (!cur.blank) {
      start({ kind: 'para', block: ++blocks });
      out.push({ from: cur.offset, kind: 'text', block: blocks });
    } else out.push({ from: line.length, kind: 'blank', block: ++blocks });
  }
  const prefix = open.map((c) => (c.quote ? '> ' : ' '.repeat(c.width))).join('');
  return {
    lines: out,
    open: {
      ...(leaf?.kind === 'fence' ? { fence: { marker: (leaf.ch as string).repeat(leaf.length as number), prefix } } : {}),
      ...(leaf?.kind === 'html' && (leaf.type as number) <= 5 && open.length === 0 ? { html: { type: leaf.type as number, name: leaf.name as string } } : {}),
    },
  };
}

/** A text's lines (split at every line ending CommonMark knows: `\r\n`, `\r`, `\n`), their endings and their blocks. */
export interface Document { lines: string[]; ends: string[]; blocks: BlockLine[]; open: OpenBlocks }

export function readDocument(text: string): Document {
  const parts = text.split(/(\r\n|\r|\n)/);
  const lines = parts.filter((_, i) => i % 2 === 0);
  const { lines: blocks, open } = readBlocks(lines);
  return { lines, ends: parts.filter((_, i) => i % 2 === 1), blocks, open };
}

export const joinDocument = (doc: Document) => doc.lines.map((line, i) => `${line}${doc.ends[i] ?? ''}`).join('');

/** Each run of lines in one block, in order (a blank line is a run of its own), with their contents. */
export function* documentBlocks(doc: Document): Generator<{ first: number; contents: string[]; kind: BlockKind }> {
  for (let i = 0; i < doc.lines.length;) {
    const { block, kind } = doc.blocks[i] as BlockLine;
    let j = i + 1;
    while (j < doc.lines.length && doc.blocks[j]!.block === block) j += 1;
    yield { first: i, kind, contents: doc.lines.slice(i, j).map((line, k) => line.slice(doc.blocks[i + k]!.from)) };
    i = j;
  }
}
