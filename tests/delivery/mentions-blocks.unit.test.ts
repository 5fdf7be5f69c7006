/**
 * Code-host comment text read as GitHub and GitLab render it (mentions.ts, blocks.ts,
 * inline.ts): block quotes and list items first, then each paragraph's code spans, then what
 * the page's HTML parser makes of the raw HTML. A mention or reference outside code gets a
 * zero-width space; code stays as written; and what a reply leaves open is closed after it,
 * inside the containers that hold it. Each expected text was checked against commonmark.js
 * (the reference implementation) and an HTML5 parser.
 */
import { MENTION_BREAK, commentText, replyClosers } from '../../functions/core/delivery/mentions';

const Z = MENTION_BREAK;
const strict = (text: string) => commentText(text, { codehost: {} });

describe('mentions and references outside code, however the blocks and spans run', () => {
  test.each([
    // A code span pairs its backticks within the paragraph, over line breaks.
    ['Steps: run `make\ntest` then see #34 and ping @acme/everyone `now`', `Steps: run \`make\ntest\` then see #${Z}34 and ping @${Z}acme/everyone \`now\``],
    ['> para `code\nstill` @bob', `> para \`code\nstill\` @${Z}bob`],
    // A fence ends with the list item or block quote that holds it.
    ['- item\n  ```\n@alice and #12', `- item\n  \`\`\`\n@${Z}alice and #${Z}12`],
    ['- item\n  ```\n  @dataclass\n  ```\n@bob and #12', `- item\n  \`\`\`\n  @dataclass\n  \`\`\`\n@${Z}bob and #${Z}12`],
    ['> ```\n> @decorator\n@alice', `> \`\`\`\n> @decorator\n@${Z}alice`],
    // A link reference definition's line, a link destination and a table cell cut what the paragraph pairs.
    ["[x]: /u 'a `'\n@bob `c`", `[x]: /u 'a \`'\n@${Z}bob \`c\``],
    ['[a](b`) @bob `', `[a](b\`) @${Z}bob \``],
    ['| a | b |\n| --- | --- |\n| `x | @bob | y` |', `| a | b |\n| --- | --- |\n| \`x | @${Z}bob | y\` |`],
    // An HTML block has no autolinks and no backslash escapes; an address's last label cannot end in `-`.
    ['<div>\n<``@bob-->\n</div>', `<div>\n<\`\`@${Z}bob-->\n</div>`],
    ['<div>a\\@bob</div>', `<div>a\\@${Z}bob</div>`],
    ['x <`@bob--> y', `x <\`@${Z}bob--> y`],
    // After raw HTML left open (an attribute's quote, `<?`), the page reads a later "tag" as text.
    ['<div title="\n\n<span title=\'"> @bob\'>x</span>', `<div title="\n\n<span title='"> @${Z}bob'>x</span>`],
    ['<div><?x <span title="#12">', `<div><?x <span title="#${Z}12">`],
    // Every line ending CommonMark knows ends a line: `\r` too.
    ['a `x\r\r@bob `', `a \`x\r\r@${Z}bob \``],
  ])('%j → %j', (input, output) => {
    expect(strict(input)).toBe(output);
    expect(strict(output)).toBe(output);
  });

  test.each([
    ['Use `a\nb` and `@Override`'],
    ['- item\n  ```py\n  @dataclass\n  ```'],
    ['> ```\n> @decorator\n> ```'],
    ['1. step\n\n   ```\n   fixes #12\n   ```'],
    ['<span title="#12"></span> and <https://x.example/@alice>'],
  ])('code and tags stay as written: %j', (input) => {
    expect(strict(input)).toBe(input);
  });
});

describe('what closes a reply', () => {
  test.each([
    // An HTML comment or <details> in a container, or split over lines.
    ['> <!-- notes', '\n\n<!-- -->'],
    ['- <!-- notes', '\n\n<!-- -->'],
    ['<details\n>', '\n\n</details>'],
    ['<details/>', '\n\n</details>'],
    // A fence is closed inside its containers: a closer outside them would open a new one.
    ['- item\n  ```sh\n  ls', '\n  ```'],
    ['> ```\n> code', '\n> ```'],
    ['Try this:\n```sh\nrm -rf build', '\n```'],
    // A tag left in an attribute value, a processing instruction, raw text elements.
    ['<div title="notes', '\n\n<!-- "\' -->'],
    ['<?xml notes', '\n\n<!-- --><!--?>-->'],
    ['LGTM <script>', '\n<!-- --></script>'],
    ['<textarea>', '\n</textarea>'],
    ['<pre>\n<!-- x', '\n\n<!-- -->\n</pre>'],
    // Markdown's text between raw HTML may end an open value (here the `'` of "it's"): what may follow is closed too.
    ["<div title='x\n\nit's fine\n\n<details>", '\n\n<!-- "\' -->\n\n</details>'],
  ])('%j → %j', (reply, closers) => {
    expect(replyClosers(reply)).toBe(closers);
  });

  test.each([
    ['Fine.\n\n> <!-- closed -->\n- `<!--` code\n<details>\n\n</details>'],
    ['- item\n  ```\n@alice'],
    ['`<details>` and `<!--` in code spans'],
    ['<div>\n<!-- a -->\n</div>\n\n```\n<!--\n```'],
  ])('nothing left open, nothing added: %j', (reply) => {
    expect(replyClosers(reply)).toBe('');
  });
});
