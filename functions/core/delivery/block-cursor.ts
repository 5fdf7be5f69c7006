/** One line of Markdown being read for its block structure (blocks.ts): the cursor commonmark.js and cmark keep, list markers, and what starts and ends the other blocks. */

export const CODE_INDENT = 4;
const BULLET = /^[*+-]/;
const ORDERED = /^(\d{1,9})([.)])/;

export const spaceOrTab = (c: string | undefined) => c === ' ' || c === '\t';

/** One line being read: the position and column reached, as commonmark.js tracks them. */
export class Cursor {
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
export function listMarker(cur: Cursor, interrupting: boolean): number | undefined {
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

export const FENCE = /^`{3,}(?!.*`)|^~{3,}/;
export const CLOSING_FENCE = /^(?:`{3,}|~{3,})(?=[ \t]*$)/;
export const ATX = /^#{1,6}(?:[ \t]+|$)/;
export const SETEXT = /^(?:=+|-+)[ \t]*$/;
/** A footnote definition's start (cmark-gfm): it ends a paragraph there. */
export const FOOTNOTE = /^\[\^[^\]\s]+\]:/;
export const THEMATIC = /^(?:\*[ \t]*){3,}$|^(?:_[ \t]*){3,}$|^(?:-[ \t]*){3,}$/;
const ATTRIBUTE = String.raw`(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>\x60]+|'[^']*'|"[^"]*"))?)`;
/** HTML block starts, types 1 to 7 (CommonMark 0.31; `source`, type 6 in GitHub's older list, too). */
export const HTML_OPEN = [
  /^<(script|pre|textarea|style)(?:\s|>|$)/i,
  /^<!--/,
  /^<[?]/,
  /^<![A-Za-z]/,
  /^<!\[CDATA\[/,
  /^<[/]?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|source|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul)(?:\s|[/]?[>]|$)/i,
  new RegExp(String.raw`^(?:<[A-Za-z][A-Za-z0-9-]*${ATTRIBUTE}*\s*/?>|</[A-Za-z][A-Za-z0-9-]*\s*>)\s*$`),
];
/** Where HTML blocks of types 1 to 5 end (on the line that matches); 6 and 7 end at a blank line. */
export const HTML_CLOSE = [/<\/(?:script|pre|textarea|style)>/i, /-->/, /\?>/, />/, /\]\]>/];
