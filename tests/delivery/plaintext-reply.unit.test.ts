/**
 * `<plaintext>` in a reply. The HTML parser reads everything after a `<plaintext>` start tag
 * as its text, to the end of the page: no end tag, comment or later markup closes it. A reply
 * holding one would swallow what hookagent writes after it in the same comment (the footer,
 * the hidden markers, the findings notes), and show none of it as what it is. GitHub's
 * cmark-gfm escapes it (GFM's "Disallowed Raw HTML" extension, tagfilter), but CommonMark
 * (commonmark.js) and GitLab (glfm_markdown runs comrak with `tagfilter: false`) pass it to
 * the page. Outside code, hookagent shows it as text (`&lt;plaintext`) wherever a reading
 * could take it as a tag; code spans and fences stay exactly as written.
 */
import { tokenize, type Html } from '../../functions/core/delivery/html-tokenizer';
import { commentText, inertText, replyClosers } from '../../functions/core/delivery/mentions';

const strict = (text: string) => commentText(text, { codehost: {} });
const FOOTER = '\n\n---\n<sub>hookagent · review</sub>\n<!-- hookagent:review:evt_1 -->';
/** Where the page's tokenizer stands after the posted comment, read as raw HTML from the start. */
const pageEnd = (posted: string): Html => tokenize({ state: 'data', details: 0 }, posted, () => {});

describe('a <plaintext> start tag outside code is shown as text', () => {
  test.each([
    ['at the end of a reply', 'LGTM.\n\n<plaintext>', 'LGTM.\n\n&lt;plaintext>'],
    ['inline in a paragraph', 'See <plaintext> here', 'See &lt;plaintext> here'],
    ['upper case, with attributes', 'x <PLAINTEXT class="a"> y', 'x &lt;PLAINTEXT class="a"> y'],
    ['self-closing (the slash is ignored: it still opens)', 'x <plaintext/> y', 'x &lt;plaintext/> y'],
    ['split over lines', 'x <plaintext\ntitle="t"> y', 'x &lt;plaintext\ntitle="t"> y'],
    ['in a block quote', '> <plaintext>', '> &lt;plaintext>'],
    ['in a list item', '- <plaintext>', '- &lt;plaintext>'],
    ['in an HTML block', '<div>\n<plaintext>\n</div>', '<div>\n&lt;plaintext>\n</div>'],
    // Markdown's own `>` (of `<p>`) after the block ends the tag the page holds open.
    ['left unfinished at the end of an HTML block', '<div>\n<plaintext\n\nafter', '<div>\n&lt;plaintext\n\nafter'],
    ['in an HTML comment (shows nothing either way)', '<!-- <plaintext> -->', '<!-- &lt;plaintext> -->'],
    ['after a backslash (a reading that ends a code span there sees a tag)', '\\<plaintext>', '\\&lt;plaintext>'],
    ['in a table cell', '| a |\n| - |\n| <plaintext> |', '| a |\n| - |\n| &lt;plaintext> |'],
    // Once the first tag is text, its backtick opens a code span, and the one that held <plaintext> closes it.
    ['after a tag shown as text that hid a backtick', '<img title="`"> `<plaintext>`', '&lt;img title="`"> `&lt;plaintext>`'],
    ['the same with two <plaintext>s', 'x <plaintext title="`"> `<plaintext>`', 'x &lt;plaintext title="`"> `&lt;plaintext>`'],
  ])('%s', (_name, reply, shown) => {
    const posted = strict(reply);
    expect(posted).toBe(shown);
    expect(strict(posted)).toBe(posted);
    expect(inertText(reply)).toBe(shown);
    // Nothing is left open for what follows: the footer is read as written.
    expect(pageEnd(`${posted}${replyClosers(posted)}${FOOTER}`)).toMatchObject({ state: 'data' });
    expect(pageEnd(`${posted}${replyClosers(posted)}${FOOTER}`).raw).toBeUndefined();
  });

  test('the reply as it was posted before swallowed the footer (the page never left plaintext)', () => {
    expect(pageEnd(`LGTM.\n\n<plaintext>${FOOTER}`).raw).toBe('plaintext');
  });

  test.each([
    ['a code span', 'Use `<plaintext>` only in quirks mode'],
    ['a fence', '```html\n<plaintext>\n```'],
    ['a tilde fence in a list item', '- x\n  ~~~\n  <plaintext>\n  ~~~'],
    ['an end tag (it opens nothing)', 'x </plaintext> y'],
    ['another name', 'x <plaintexts> <plain text> <xplaintext> y'],
    ['an escaped text', 'x &lt;plaintext> y'],
  ])('left exactly as written: %s', (_name, reply) => {
    expect(strict(reply)).toBe(reply);
  });
});
