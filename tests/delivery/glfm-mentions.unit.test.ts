/**
 * Comment text read as GitLab renders a note: GitLab Flavored Markdown (GLFM), rendered since
 * GitLab 16 by glfm_markdown, which runs comrak with GitLab's options
 * (lib/banzai/filter/markdown_engines/glfm_markdown.rb: multiline_block_quotes, alerts,
 * description_lists, math_dollars, math_code, wikilinks_title_before_pipe, tagfilter off),
 * after GitLab's own pre-processing (lib/banzai/filter/front_matter_filter.rb: front matter
 * at the top becomes a fenced code block; markdown_filter.rb deletes every `\r`). GitLab
 * then links references in the text nodes that are not in `pre`, `code` or `a`
 * (lib/banzai/filter/references/reference_filter.rb), and reads a link whose href, once
 * percent-decoded, is exactly a reference (`@bob`, `#12`) as that reference
 * (abstract_reference_filter.rb). Each case below is code (or no reference) as CommonMark
 * reads it (commonmark.js 0.31.2) and, but for GFM's autolinks, as cmark-gfm reads it, and
 * live text on GitLab: the mention or reference gets its zero-width space. The GitLab readings follow comrak's own spec fixtures and sources
 * (kivikakk/comrak src/tests/fixtures/multiline_blockquote.md, description_lists.md,
 * src/parser/inlines.rs handle_dollars, handle_wikilink).
 */
import { readBlocks } from '../../functions/core/delivery/blocks';
import { gitlabReading } from '../../functions/core/delivery/glfm-reading';
import { MENTION_BREAK, commentText, inertText, replyClosers } from '../../functions/core/delivery/mentions';

const Z = MENTION_BREAK;
const strict = (text: string) => commentText(text, { codehost: {} });

describe('where GitLab reads text that CommonMark and GFM read as code, mentions and references are made inert', () => {
  test.each([
    // A `>>>` line closes the multi-line block quote even inside a fence it holds; the fence ends with it.
    ['a >>> line ends the fence a multi-line quote holds', '>>>\n```\n>>>\n@bob and #12\n```', `>>>\n\`\`\`\n>>>\n@${Z}bob and #${Z}12\n\`\`\``],
    ['a multi-line alert the same', '>>> [!note]\n~~~\n>>>\n@bob\n~~~', `>>> [!note]\n~~~\n>>>\n@${Z}bob\n~~~`],
    // Front matter at the top becomes a ``` block: a `~~~` in it no longer runs on, a `+++` line ends the paragraph.
    ['YAML front matter holding a fence', '---\n~~~\n---\n@bob\n~~~', `---\n~~~\n---\n@${Z}bob\n~~~`],
    ['TOML front matter cutting a code span', '+++\n`a\n+++\n@bob ` and #12', `+++\n\`a\n+++\n@${Z}bob \` and #${Z}12`],
    ['front matter after blank lines, closed by `...`', '\n\n;;;\n`x\n...\n@bob`', `\n\n;;;\n\`x\n...\n@${Z}bob\``],
    ['front matter after an encoding line', '# coding: utf-8\n+++\n`a\n+++\n@bob`', `# coding: utf-8\n+++\n\`a\n+++\n@${Z}bob\``],
    ['front matter with CRLF line ends', '+++\r\n`a\r\n+++\r\n@bob `', `+++\r\n\`a\r\n+++\r\n@${Z}bob \``],
    // A description (`: ` or `~ ` after a paragraph line) ends the paragraph, and the code span with it.
    ['a description list', 'Term `a\n: @bob` b', `Term \`a\n: @${Z}bob\` b`],
    ['a description list with ~', 'Term `a\n~ ping @bob and !4`', `Term \`a\n~ ping @${Z}bob and !${Z}4\``],
    ['a description list in a block quote', '> Term `a\n> : @bob` b', `> Term \`a\n> : @${Z}bob\` b`],
    ['a multi-line quote in a list item', '- >>>\n  ```\n  >>>\n  @bob\n  ```', `- >>>\n  \`\`\`\n  >>>\n  @${Z}bob\n  \`\`\``],
    // Math takes its backticks first: `$x `y$` and `$$ `a $$` are math (shown as text), so the next backtick opens the span.
    ['inline math', '$x `y$ @bob `z`', `$x \`y$ @${Z}bob \`z\``],
    ['display math', '$$ `a $$ @bob `', `$$ \`a $$ @${Z}bob \``],
    ['a mention inside math is text there too', 'where $@bob$ is', `where $@${Z}bob$ is`],
    // A wiki link takes its backticks too.
    ['a wiki link', '[[a `b]] @bob `c`', `[[a \`b]] @${Z}bob \`c\``],
    ['a wiki link with a title', 'see [[Guide `x|guide]] and #12 `y`', `see [[Guide \`x|guide]] and #${Z}12 \`y\``],
    // An alert's title (the rest of its `[!note]` line) is plain text: backticks there are no code.
    ['an alert title', '> [!warning] `@bob`', `> [!warning] \`@${Z}bob\``],
    // GitLab deletes every `\r` first: the two lines are one, and ``` pairs with no single backtick.
    ['a \\r GitLab deletes', '`@bob`\r`` x', `\`@${Z}bob\`\r\`\` x`],
    // GFM's autolinks (comrak's, cmark-gfm's too) take a URL up to the next space as the parser reaches its `:` or `w`.
    ['a bare URL holding a backtick', 'see https://x.example/a`b @bob `c`', `see https://x.example/a\`b @${Z}bob \`c\``],
    ['a www. link holding a backtick', 'see www.x.example/a`b #12 `c`', `see www.x.example/a\`b #${Z}12 \`c\``],
    // comrak reads comments as CommonMark 0.31 and declarations as GFM (uppercase): a third pairing of backticks.
    ['a comment and a lowercase declaration', 'x <!-- a--b ` --> <!x ` > `@bob`', `x <!-- a--b \` --> <!x \` > \`@${Z}bob\``],
  ])('%s', (_name, input, output) => {
    expect(strict(input)).toBe(output);
    expect(strict(output)).toBe(output);
    expect(inertText(input)).toBe(output);
  });

  test.each([
    ['>>>\n```\n@decorator\n```\n>>>'],
    ['> [!NOTE]\n> Use `@Override` here'],
    ['---\ntitle: x\n---\n```\n@dataclass\n```'],
    ['Intro\n+++\n`a\n+++\n@bob`'],
    ['   +++\n`a\n+++\n@bob`'],
    ['Term\n: `@Override`'],
    ['Term `a\n:@bob` b'],
    ['costs $5 and `@Override`'],
    ['$ `@Override` $'],
    ['\\$x `@Override` $'],
    ['$`x`$ and `@Override`'],
    ['[x [[a `b]] @y `c`'],
    ['see https://x.example/docs and `@Override`'],
    ['run `curl https://x.example/@alice` first'],
    ['awww.x.example/`@Override`'],
  ])('code GitLab reads as code too stays as written: %j', (input) => {
    expect(strict(input)).toBe(input);
  });
});

describe('GitLab references and mentions CommonMark and GFM do not have', () => {
  test.each([
    // docs.gitlab.com "GitLab-specific references": GL-123, [issue:123], [work_item:…], [epic:…] name issues and epics.
    ['GL-123 and gl-4', `GL-${Z}123 and gl-${Z}4`],
    ['[issue:12], [work_item:group/project/7] and [epic:3]', `[issue:${Z}12], [work_item:${Z}group/project/7] and [epic:${Z}3]`],
    ['[ISSUE:12]', `[ISSUE:${Z}12]`],
    // A namespace path may start with a dot (lib/gitlab/path_regex.rb PATH_START_CHAR).
    ['ping @.dotfiles and @..x-y', `ping @${Z}.dotfiles and @${Z}..x-y`],
    // A link whose href, percent-decoded, is a reference is that reference.
    ['[see](%40bob) and [this](%2312)', `[see](%40${Z}bob) and [this](%23${Z}12)`],
    ['[see](&#37;40bob)', `[see](%40${Z}bob)`],
    ['[x]: %21%34\n\n[x]', `[x]: %21${Z}%34\n\n[x]`],
    ['<a href="@bob">x</a> <a href=\'#12\'>y</a> <a title=t href=%40carol>z</a>', `<a href="@${Z}bob">x</a> <a href='#${Z}12'>y</a> <a title=t href=%40${Z}carol>z</a>`],
    ['<a HREF = "&#64;bob">x</a>', `<a HREF = "@${Z}bob">x</a>`],
  ])('%j → %j', (input, output) => {
    expect(strict(input)).toBe(output);
    expect(strict(output)).toBe(output);
  });

  test.each([
    ['OpenGL-3 and GL-12a'],
    ['[issues:12] and [issue] and [Issue 12]'],
    ['@ alone, @. and @.. and @-dash'],
    ['<span title="#12"></span> <a href="https://x.example/@alice">a</a> <a href="mailto:a@b.example">m</a>'],
    ['[x](https://x.example/a%40b/#12)'],
    ['100%40 off'],
  ])('left as written: %j', (input) => {
    expect(strict(input)).toBe(input);
  });
});

describe('what closes a reply on GitLab', () => {
  test.each([
    // The fence GitLab opens after the multi-line quote, and the one after front matter: CommonMark has none open.
    ['>>>\n```\n>>>\n@bob\n```', '\n<!--\n```\n<!-- -->'],
    ['---\n~~~\n---\n@bob\n~~~', '\n<!--\n~~~\n<!-- -->'],
  ])('%j gets %j', (reply, closers) => {
    expect(replyClosers(reply)).toBe(closers);
    const posted = `${reply}${closers}\n\nfooter @x`.split('\n');
    for (const gfm of [false, true]) {
      const read = readBlocks(posted, gfm);
      expect([read.lines.at(-1)!.kind, read.fence, read.html]).toEqual(['text', undefined, undefined]);
    }
    // And as GitLab reads it: the footer's mention is text, outside any fence.
    const gitlab = gitlabReading(posted.join('\n'));
    expect([gitlab.fence, gitlab.html, gitlab.kinds.at(-1)]).toEqual([undefined, undefined, 0]);
    expect(gitlabReading(reply).fence).toBeDefined();
  });

  test('a reply GitLab reads the same way gets nothing', () => {
    for (const reply of ['>>>\nquoted\n>>>', '---\ntitle: x\n---\nbody', 'Term\n: details', '$x$ and [[Home]]']) expect(replyClosers(reply)).toBe('');
  });
});
