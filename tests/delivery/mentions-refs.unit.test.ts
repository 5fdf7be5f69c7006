/**
 * Issue and merge request references in code-host comments (mentions.ts): GitHub and
 * GitLab turn `#123`, `GH-123`, `owner/repo#123`, `owner/repo@sha`, `!123`, `&12` … into
 * links and add a "mentioned this" cross-reference to what they name, so a steered reply
 * could spam backlinks into other issues and repositories. Outside code they get a
 * zero-width space after the sigil unless `delivery.codehost.allow_mentions` is true;
 * ordinary text that only looks similar stays exactly as written.
 */
import { MENTION_BREAK, commentText, inertText } from '../../functions/core/delivery/mentions';

const Z = MENTION_BREAK;
const strict = (text: string) => commentText(text, { codehost: {} });
const SHA = 'a5c3785ed8d6a35868bc169f07e40e889087fd2e';

describe('references that would link and cross-reference are made inert', () => {
  test.each([
    // GitHub (docs: "Autolinked references and URLs").
    ['See #26.', `See #${Z}26.`],
    ['GH-26 and gh-7', `GH-${Z}26 and gh-${Z}7`],
    ['jlord/sheetsee.js#26 and github-linguist/linguist#4039', `jlord/sheetsee.js#${Z}26 and github-linguist/linguist#${Z}4039`],
    [`jlord/sheetsee.js@${SHA} and jlord@a5c3785`, `jlord/sheetsee.js@${Z}${SHA} and jlord@${Z}a5c3785`],
    // GitLab (docs: "GitLab-specific references"): issues, merge requests, epics, commits, shortcuts within a namespace.
    ['!123, group/project!123, project!4', `!${Z}123, group/project!${Z}123, project!${Z}4`],
    ['group/sub/project#12 and project#3', `group/sub/project#${Z}12 and project#${Z}3`],
    ['&12 and group/subgroup&34', `&${Z}12 and group/subgroup&${Z}34`],
    ['namespace/project@9ba12248...b19a04f5', `namespace/project@${Z}9ba12248...b19a04f5`],
    ['#123+ and !4+s', `#${Z}123+ and !${Z}4+s`],
    // Wherever the rendered text still reads as one: lists, emphasis, headings, brackets, HTML, line starts.
    ['Fixes #1, #2 and #3', `Fixes #${Z}1, #${Z}2 and #${Z}3`],
    ['**#12** _#13_ ~~#14~~', `**#${Z}12** _#${Z}13_ ~~#${Z}14~~`],
    ['# Fix #12\n#1 priority', `# Fix #${Z}12\n#${Z}1 priority`],
    ['(#12) [#13] <b>#14</b>', `(#${Z}12) [#${Z}13] <b>#${Z}14</b>`],
    ['> quoted: o/r#5', `> quoted: o/r#${Z}5`],
    // Spelled with entities or backslash escapes: the rendered text is the same reference.
    ['&#35;12 &#x23;13 &num;14', `&#35;${Z}12 &#x23;${Z}13 &num;${Z}14`],
    ['&#33;12 &excl;13 &amp;14 &#38;15', `&#33;${Z}12 &excl;${Z}13 &amp;${Z}14 &#38;${Z}15`],
    ['#&#49;2 and o/r@&#97;5c3785', `#${Z}&#49;2 and o/r@${Z}&#97;5c3785`],
    ['\\#12 GH\\-13 \\!14', `\\#${Z}12 GH\\-${Z}13 \\!${Z}14`],
    // Not a URL the host would link, so what follows is text.
    ['xhttps://a.example/#12 and https://#13', `xhttps://a.example/#${Z}12 and https://#${Z}13`],
    ['[a](https://x.example)#12', `[a](https://x.example)#${Z}12`],
    ['https://-x.example/#1 https://a.b_c/#2 /www.a.example/#3 ftp://a.example/#4', `https://-x.example/#${Z}1 https://a.b_c/#${Z}2 /www.a.example/#${Z}3 ftp://a.example/#${Z}4`],
    // An escape or entity ends a URL: what follows it is separate text.
    ['https://x.example/&#35;12,#13', `https://x.example/&#35;${Z}12,#${Z}13`],
    // cmark-gfm links no URL while a `[` is open in the paragraph, and none in an HTML block.
    ['[see https://a.example/#1,#2', `[see https://a.example/#${Z}1,#${Z}2`],
    ['[x\nhttps://a.example/#1', `[x\nhttps://a.example/#${Z}1`],
    ['[[a](https://a.example/#1 #2)', `[[a](https://a.example/#${Z}1 #${Z}2)`],
    ['<div>\nhttps://a.example/#1\n</div>', `<div>\nhttps://a.example/#${Z}1\n</div>`],
    // Emphasis markers are not part of the rendered text.
    ['_GH-1_ *GH-2*', `_GH-${Z}1_ *GH-${Z}2*`],
  ])('%j → %j', (input, output) => {
    expect(strict(input)).toBe(output);
    // Idempotent: a second pass changes nothing.
    expect(strict(output)).toBe(output);
    // Inline findings (no setting allows them) are made inert too.
    expect(inertText(input)).toBe(output);
  });
});

describe('text that only looks like a reference stays exactly as written', () => {
  test.each([
    ['C# and F# code, #!/bin/sh'],
    ['# Title\n## Section 2\n### 3 steps'],
    ['colours #fff, #1a2b3c and #123abc'],
    ['a!b, Wow! !important and x != y'],
    ['R&D, AT&T, &nbsp; &#123; &copy; &amp;'],
    ['mail a@b.example or dev@cafe1234.example.com'],
    ['issue 12, PR-12, SIGH-12, $123 and 1 + 1 = 2'],
    ['ends with #'],
    // URLs the host autolinks: their fragments are part of the link.
    ['https://example.com/page#123 and http://a.example/x?y=1&12=3#4'],
    ['see https://x.example/a#1,#2 and www.example.com/#12.'],
    ['[docs](https://x.example/#12) and [wiki](https://en.wikipedia.org/wiki/Foo_(bar)#12)'],
    ['<https://x.example/#12> stays an autolink'],
    ['[ref]: https://x.example/#12'],
    // Brackets closed (a link, escaped ones, a new paragraph) leave later URLs links.
    [['[a](https://x.example) then https://b.example/#1', '\\[ https://b.example/#1', '[x\n\nhttps://b.example/#1'].join('\n\n')],
    ['HTTPS://A.EXAMPLE/#1 (www.a.example/#2)'],
    // Code is left as written.
    ['`#12 !34 &5 o/r#6 GH-7` in a span'],
    ['```\nfixes #12, !34 and o/r@a5c3785\n```'],
    ['<span title="#12"></span>'],
  ])('%j', (input) => {
    expect(strict(input)).toBe(input);
  });
});

describe('the switch', () => {
  test('delivery.codehost.allow_mentions: true leaves references live, like mentions', () => {
    const reply = 'Duplicate of #12, see o/r#3, !4 and &5; GH-6.';
    expect(commentText(reply, { codehost: { allow_mentions: true } })).toBe(reply);
    expect(commentText(reply, { codehost: {} })).toBe(`Duplicate of #${Z}12, see o/r#${Z}3, !${Z}4 and &${Z}5; GH-${Z}6.`);
  });

  test('a reply of thousands of references keeps none live and stays readable', () => {
    const reply = Array.from({ length: 2000 }, (_, i) => `org${i % 7}/repo#${i}`).join(' ');
    const out = strict(reply);
    expect(out.match(/[#!&]\d/g) ?? []).toEqual([]);
    expect(out.replaceAll(Z, '')).toBe(reply);
  });
});

describe('@mentions spelled so that only the rendered text shows them', () => {
  test.each([
    // An entity or an escape for the name's first character still renders `@alice`.
    ['&#64;&#97;lice and @&#98;ob', `@${Z}&#97;lice and @${Z}&#98;ob`],
    ['@\\_alice', `@${Z}\\_alice`],
    // Emphasis around a mention: `_` is no word character before it.
    ['_@alice_', `_@${Z}alice_`],
    ['[x https://medium.com/@alice', `[x https://medium.com/@${Z}alice`],
  ])('%j → %j', (input, output) => {
    expect(strict(input)).toBe(output);
    expect(strict(output)).toBe(output);
  });

  test('a mention inside a URL the host autolinks is part of the link and is left alone', () => {
    for (const text of ['https://medium.com/@alice/post', '[post](https://medium.com/@alice/post)']) expect(strict(text)).toBe(text);
  });
});
