/**
 * A comment as GitLab reads it: the text as comrak gets it from GitLab (glfm.ts gitlabSource),
 * its blocks (blocks.ts, GLFM) and each block's inline kinds (inline.ts, GLFM), as the page
 * then reads its raw HTML (block-kinds.ts). Mapped back to the text GitLab was sent: each
 * character is code, a tag or text there (a character GitLab replaces, front matter's
 * delimiter lines, is text). mentions.ts reads code and tags only where GitLab does too.
 */
import { readBlocks, type Document, type GitlabBlocks } from './blocks';
import { kindedBlocks, lineStarts, textOffsets } from './block-kinds';
import { gitlabSource } from './glfm';
import type { HtmlReader } from './html-tokenizer';
import { CODE } from './inline';

/** GitLab's reading: per character of the text, its kind; what it leaves open; its pages, fed its raw HTML. */
export interface GitlabReading extends GitlabBlocks { pages: HtmlReader[] }

export function gitlabReading(text: string): GitlabReading {
  const source = gitlabSource(text);
  const lines = source.text.split('\n');
  const read = readBlocks(lines, true, true);
  const doc: Document = { lines, ends: lines.slice(1).map(() => '\n'), blocks: read.lines, open: { fences: [] } };
  const starts = lineStarts(doc);
  // Per character of GitLab's source: text unless read otherwise.
  const mine = new Uint8Array(source.text.length);
  read.lines.forEach(({ kind, from }, i) => {
    // Indented code is code on GitLab (mentions.ts reads it as text anyway).
    if (kind === 'code' || kind === 'indented') mine.fill(CODE, (starts[i] as number) + from, (starts[i] as number) + (lines[i] as string).length);
  });
  const { blocks, pages } = kindedBlocks(doc, ['glfm']);
  for (const block of blocks.filter((b) => b.kind !== 'indented')) {
    textOffsets(doc, starts, block).forEach((at, j) => {
      if (at >= 0) mine[at] = block.kinds[j] as number;
    });
  }
  const kinds = new Uint8Array(text.length);
  source.at.forEach((origin, i) => {
    if (origin >= 0) kinds[origin] = mine[i] as number;
  });
  return { kinds, ...(read.fence ? { fence: read.fence } : {}), ...(read.html ? { html: read.html } : {}), pages };
}
