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
 * multiple of 4. GitHub renders with cmark-gfm (GFM 0.29), which reads three things
 * otherwise: a declaration HTML block needs an uppercase letter (`<!DOCTYPE`, not
 * `<!doctype`), a footnote definition (`[^note]:`) ends a paragraph, and a type-7 HTML block
 * may start on a line commonmark.js takes as a lazy paragraph continuation. The text is read
 * both ways (gfm-blocks.ts), and where the two differ it is read as text, with no code in it.
 * GitLab's comrak reads GLFM's blocks too (glfm.ts); its reading (glfm-reading.ts) makes the
 * lines both read as code text where it reads text.
 */
import { ATX, CLOSING_FENCE, CODE_INDENT, Cursor, FENCE, FOOTNOTE, HTML_CLOSE, HTML_OPEN, listMarker, SETEXT, spaceOrTab, THEMATIC } from './block-cursor';
import { intersectBlocks } from './gfm-blocks';
import { ALERT, descriptionMarker, multilineFence } from './glfm';
import { CODE } from './inline';

/** `code`: a fence or a line in one; `indented`: indented code (read as text by mentions.ts: a misjudged one costs a space, not a mention). */
export type BlockKind = 'text' | 'html' | 'code' | 'indented' | 'blank';

/** A line: where its content starts after the container prefixes, its kind, and its block (a paragraph's lines share one). */
export interface BlockLine { from: number; kind: BlockKind; block: number }

/** A fence still open, and the prefix that puts a line in its containers (`> `, an item's indentation). */
export interface OpenFence { marker: string; prefix: string }

export interface OpenBlocks {
  /** Fences still open in either block reading; `bare`: a closer alone is inert in both (else the one without the fence would open one). */
  fences: Array<OpenFence & { bare: boolean }>;
  /** An HTML block of type 1 to 5 still open outside any container: it runs on until its own end. */
  html?: { type: number; name: string };
}

/** A block quote, a list item or description (`width`), or a multi-line block quote (GLFM: `fence` `>`s, `width` its indentation). */
interface Container { quote: boolean; width: number; empty: boolean; fence?: number }
interface Leaf { kind: 'para' | 'fence' | 'indented' | 'html'; block: number; ch?: string; length?: number; type?: number; name?: string }

/** One block reading: each line's block, and the fence and HTML block left open. */
export interface BlockReading { lines: BlockLine[]; fence?: OpenFence; html?: OpenBlocks['html'] }

/**
 * The block structure of `lines` (split at every line ending: `\r\n`, `\r` or `\n`), as
 * commonmark.js reads it, or cmark-gfm (`gfm`), or comrak with GitLab's extensions (`glfm`,
 * with `gfm`; glfm.ts): multi-line block quotes and alerts, descriptions, and declarations
 * (`<!x`) in any case.
 */
export function readBlocks(lines: readonly string[], gfm = false, glfm = false): BlockReading {
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
    let endsQuote = false;
    for (const c of open) {
      cur.findNext();
      // A multi-line quote's closing line ends it and all it holds, a fence too; else it holds every line.
      if (c.fence !== undefined && cur.indent <= 3 && multilineFence(cur.rest) >= c.fence) {
        endsQuote = true;
        break;
      }
      if (c.fence !== undefined) for (let i = c.width; i > 0 && spaceOrTab(line[cur.offset]); i--) cur.advance(1, true);
      else if (c.quote && cur.indent < CODE_INDENT && line[cur.next] === '>') cur.pastQuote();
      else if (!c.quote && cur.blank && !c.empty) cur.toNext();
      else if (!c.quote && !cur.blank && cur.indent >= c.width) cur.advance(c.width, true);
      else break;
      matched += 1;
    }
    if (endsQuote) {
      [open.length, leaf, filled] = [matched, undefined, Math.min(filled, matched)];
      out.push({ from: line.length, kind: 'blank', block: ++blocks });
      continue;
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
      const alert = glfm && !indented ? ALERT.exec(rest) : null;
      const quoteFence = alert ? (alert[1] as string).length : glfm && !indented ? multilineFence(rest) : 0;
      if (quoteFence > 0 && quoteFence !== 2) {
        // A multi-line quote or alert (`>>>`), or an alert (`> [!note]`): the rest of its line is its title, plain text.
        start();
        open.push(quoteFence >= 3 ? { quote: false, width: cur.indent, empty: true, fence: quoteFence } : { quote: true, width: 0, empty: true });
        matched = open.length;
        cur.toNext();
        cur.advance(alert ? quoteFence + 1 : quoteFence, false);
        if (!alert) continue;
        [kind, from] = ['text', cur.offset];
        break;
      }
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
      if (gfm && !indented && (paragraph || lazyParagraph) && FOOTNOTE.test(rest)) {
        start({ kind: 'para', block: ++blocks });
        cur.toNext();
        break;
      }
      // cmark tests only the matched container for a paragraph (no lazy one); GFM's declarations are uppercase.
      const opens = (re: RegExp, i: number) => re.test(rest) && (i !== 3 || !gfm || glfm || /^<![A-Z]/.test(rest)) && (i < 6 || !(paragraph || (lazyParagraph && !gfm)));
      const type = indented || rest[0] !== '<' ? -1 : HTML_OPEN.findIndex(opens);
      if (fence || type >= 0) {
        start(fence ? { kind: 'fence', block: ++blocks, ch: fence[0][0], length: fence[0].length } : { kind: 'html', block: ++blocks, type: type + 1, name: (HTML_OPEN[0]!.exec(rest)?.[1] ?? 'pre').toLowerCase() });
        [kind, from] = fence ? ['code', cur.next] : ['html', cur.offset];
        break;
      }
      // GLFM: a description (`: `, `~ `) ends the paragraph line before it and holds blocks, as a list item does.
      const marker = glfm && paragraph && !indented ? descriptionMarker(rest) : 0;
      if (marker > 0) {
        start();
        open.push({ quote: false, width: cur.indent + marker, empty: true });
        matched = open.length;
        cur.toNext();
        cur.advance(marker, false);
        continue;
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
    ...(leaf?.kind === 'fence' ? { fence: { marker: (leaf.ch as string).repeat(leaf.length as number), prefix } } : {}),
    ...(leaf?.kind === 'html' && (leaf.type as number) <= 5 && open.length === 0 ? { html: { type: leaf.type as number, name: leaf.name as string } } : {}),
  };
}

/** A text's lines (split at every line ending CommonMark knows: `\r\n`, `\r`, `\n`), their endings and their blocks. */
export interface Document { lines: string[]; ends: string[]; blocks: BlockLine[]; open: OpenBlocks }

/** GitLab's reading of a text (glfm-reading.ts): each character's kind (inline.ts), and what it leaves open. */
export interface GitlabBlocks { kinds: Uint8Array; fence?: OpenFence; html?: OpenBlocks['html'] }

/** The text's document, as commonmark.js and cmark-gfm read it; given GitLab's reading, a line both read as code that GitLab reads as text anywhere is text. */
export function readDocument(text: string, gitlab?: GitlabBlocks): Document {
  const parts = text.split(/(\r\n|\r|\n)/);
  const lines = parts.filter((_, i) => i % 2 === 0);
  const ends = parts.filter((_, i) => i % 2 === 1);
  const common = readBlocks(lines);
  const seed = new Uint8Array(lines.length);
  for (let i = 0, at = 0; gitlab && i < lines.length; at += (lines[i] as string).length + (ends[i]?.length ?? 0), i++) {
    const { kind, from } = common.lines[i] as BlockLine;
    if (kind === 'code' && gitlab.kinds.subarray(at + from, at + (lines[i] as string).length).some((k) => k !== CODE)) seed[i] = 1;
  }
  const { lines: blocks, open } = intersectBlocks(common, readBlocks(lines, true), seed, gitlab);
  return { lines, ends, blocks, open };
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
