/**
 * The kinds of each block's characters outside code (inline.ts) as the page reads them: the
 * page's HTML tokenizer reads the raw HTML Markdown hands it in order (html-tokenizer.ts), and
 * after raw HTML left open (an unclosed `<?` or quote) a tag or autolink of Markdown's can be
 * text there. One page per inline reading follows that reading's raw HTML, for what a reply
 * leaves open (mentions.ts replyClosers); the first decides which tags are read as tags.
 */
import { documentBlocks, type BlockKind, type Document } from './blocks';
import { HtmlReader } from './html-tokenizer';
import { inlineKinds, TAG, TEXT, type Flavour } from './inline';

/** A block outside code: its lines' contents joined with `\n`, and each character's kind (a blank line: none). */
export interface KindedBlock { first: number; kind: Exclude<BlockKind, 'code'>; joined: string; kinds: Uint8Array }

/** The blocks of `doc` outside code, in order, read in `flavours`; and the pages, one per inline reading, fed their raw HTML. */
export function kindedBlocks(doc: Document, flavours: readonly Flavour[]): { blocks: KindedBlock[]; pages: HtmlReader[] } {
  const pages = Array.from({ length: 2 * flavours.length }, () => new HtmlReader());
  const page = pages[0] as HtmlReader;
  const blocks: KindedBlock[] = [];
  for (const { first, contents, kind } of documentBlocks(doc)) {
    if (kind === 'code') continue;
    const joined = contents.join('\n');
    if (kind === 'blank') {
      blocks.push({ first, kind, joined, kinds: new Uint8Array(joined.length) });
      continue;
    }
    const html = kind === 'html';
    const { kinds, units } = inlineKinds(contents, html, flavours);
    const untag = (from: number, inTag: Uint8Array) => (k: number, i: number) => {
      if (k === TAG && !inTag[i]) kinds[from + i] = TEXT;
    };
    if (html) pages.map((p) => p.feed(joined)).slice(0, 1).forEach((inTag) => kinds.forEach(untag(0, inTag)));
    else if (kind === 'text') {
      units.forEach((found, r) => r > 0 && found.forEach((u) => u.raw && pages[r]!.feed(joined.slice(u.from, u.to))));
      for (const { from, to, raw } of units[0] as typeof units[0]) {
        // An autolink is Markdown's own link: read as one only where no raw HTML before it is left open.
        const inTag = raw ? page.feed(joined.slice(from, to)) : new Uint8Array(to - from).fill(page.plain ? 1 : 0);
        kinds.subarray(from, to).forEach(untag(from, inTag));
      }
    }
    blocks.push({ first, kind, joined, kinds });
  }
  return { blocks, pages };
}

/** Where each line of `doc` starts in its text. */
export function lineStarts(doc: Document): number[] {
  const starts: number[] = [];
  doc.lines.reduce((at, line, i) => (starts.push(at), at + line.length + (doc.ends[i]?.length ?? 0)), 0);
  return starts;
}

/** Where each character of a block's joined text is in the text of `doc` (`starts`: lineStarts); a `\n` joining two lines: -1. */
export function textOffsets(doc: Document, starts: readonly number[], { first, joined }: KindedBlock): Int32Array {
  const at = new Int32Array(joined.length);
  for (let j = 0, line = first, next = (starts[first] as number) + doc.blocks[first]!.from; j < joined.length; j++) {
    if (joined[j] !== '\n') at[j] = next++;
    else [at[j], next] = [-1, (starts[++line] as number) + doc.blocks[line]!.from];
  }
  return at;
}
