/**
 * Comment text read as GitHub renders it: cmark-gfm (GFM spec 0.29 and extensions) ends
 * code spans, paragraphs and HTML blocks elsewhere than commonmark.js (CommonMark 0.31),
 * and text is code only if both readings say so. Each GitHub rendering below was checked
 * with github/cmark-gfm (`--unsafe -e footnotes -e table -e strikethrough -e autolink
 * -e tagfilter -e tasklist`).
 */
import { readBlocks, readDocument } from '../../functions/core/delivery/blocks';
import { CODE, inlineKinds, TEXT } from '../../functions/core/delivery/inline';
import { MENTION_BREAK, commentText, replyClosers } from '../../functions/core/delivery/mentions';

const Z = MENTION_BREAK;
const strict = (text: string) => commentText(text, { codehost: {} });
/** The kind of the first character of `needle` in `text` read as one paragraph. */
const kindAt = (text: string, needle: string) => inlineKinds(text.split('\n'), false).kinds[text.indexOf(needle)];

describe('where cmark-gfm reads text that commonmark.js reads as code, mentions and references are made inert', () => {
  test.each([
    // <p>Thanks! &lt;!-- a--b <code>--&gt;</code>ping @acme/everyone and #34` done</p>
    ['a comment GFM refuses (`--` in its text)', 'Thanks! <!-- a--b ` --> `ping @acme/everyone and #34` done', `Thanks! <!-- a--b \` --> \`ping @${Z}acme/everyone and #${Z}34\` done`],
    // <p>Thanks! cc `@acme/everyone #34</p> and a footnote
    ['a footnote definition ends the paragraph', 'Thanks! cc `@acme/everyone #34\n[^note]: ` see above', `Thanks! cc \`@${Z}acme/everyone #${Z}34\n[^note]: \` see above`],
    // <blockquote><p>quoted</p></blockquote> then the HTML block "<span>\nsee `@acme/everyone #34`"
    ['a type-7 HTML block ends a lazy paragraph', '> quoted\n<span>\nsee `@acme/everyone #34`', `> quoted\n<span>\nsee \`@${Z}acme/everyone #${Z}34\``],
    // <p>Use `` for this, <code>a</code> too, and `@acme/everyone #34`</p>
    ["cmark's backtick memo refuses a later span", 'Use `` for this, `a` too, and `@acme/everyone #34`', `Use \`\` for this, \`a\` too, and \`@${Z}acme/everyone #${Z}34\``],
    // <p>&lt;!x <code>@bob</code></p> in GFM; an HTML block in CommonMark 0.31, where @bob is text
    ['a lowercase declaration is an HTML block in one reading only', '<!x `@bob`', `<!x \`@${Z}bob\``],
  ])('%s', (_name, input, output) => {
    expect(strict(input)).toBe(output);
    expect(strict(output)).toBe(output);
  });

  test('code both readings agree on stays as written', () => {
    for (const text of ['Use `@Override` and <!-- ok --> `@dataclass`', 'x <!---->`@a`', 'x <!DOCTYPE html> `@b`', '> quoted\n`@c`', '`a` and `` `@d` ``', '[^n]: see `@e`']) expect(strict(text)).toBe(text);
  });
});

describe('the cmark-gfm inline reading', () => {
  test.each([
    ['<!-- a--b ` --> `@x`', '@x'],
    ['<!--> ` `@x`', '@x'],
    ['<!---> ` `@x`', '@x'],
    ['<!-- ` a---> `@x`', '@x'],
    ['<!doctype ` > `@x`', '@x'],
    ['<!DOCTYPE` > `@x`', '@x'],
    ['`` `a` `@x`', '@x'],
  ])('%j: %j is text', (text, needle) => {
    expect(kindAt(text, needle)).toBe(TEXT);
  });

  test.each([
    ['<!-- a ` --> `@x`', '@x'],
    ['<!---->`@x`', '@x'],
    ['<!DOCTYPE ` > `@x`', '@x'],
    ['`a` `` `@x` ``', '@x'],
  ])('%j: %j is code in both readings', (text, needle) => {
    expect(kindAt(text, needle)).toBe(CODE);
  });
});

describe('the GFM block reading', () => {
  test('a line the readings put in different blocks is read as text', () => {
    const doc = readDocument('> quoted\n<span>\nsee `x`');
    expect(doc.blocks.map((b) => b.kind)).toEqual(['html', 'html', 'html']);
    expect(readDocument('a\n[^n]: b').blocks[0]!.block).toBe(readDocument('a\n[^n]: b').blocks[1]!.block);
  });

  test.each([
    // <p>&lt;!doctype</p><pre><code>… : GFM opens the fence; CommonMark 0.31 reads an HTML block.
    'LGTM.\n\n<!doctype\n```',
    '<!x\n```\n>\n```',
    '- <!doctype\n  ```',
  ])('a fence one reading leaves open is closed, inertly in the other: %j', (reply) => {
    const posted = `${reply}${replyClosers(reply)}\n\nfooter @x`.split('\n');
    // What follows the reply starts outside any fence or HTML block, as commonmark.js and as cmark-gfm read.
    for (const gfm of [false, true]) {
      const read = readBlocks(posted, gfm);
      expect([read.lines[read.lines.length - 1]!.kind, read.fence, read.html]).toEqual(['text', undefined, undefined]);
    }
  });
});
