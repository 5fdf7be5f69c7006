/**
 * The loop guard counts hookagent's marker only where hookagent puts it: the last line of the
 * body, at the top level, outside code. Every body hookagent writes (new and sticky comments,
 * review bodies, inline findings, whatever the reply left open) counts; a human who quotes one
 * (GitHub's "Quote reply" or `> ` by hand), pastes it into code, a list item or inline code,
 * or types the string, is not ignored. Bodies that are not strings or longer than any comment
 * hookagent writes count for nothing.
 */
import { causedByHookagent, commentMarker, LONGEST_OWN_TEXT, stickyMarker } from '../../functions/core/events/loop-guard';
import { fitSealed, GITHUB_COMMENT_LIMIT, GITLAB_NOTE_LIMIT, stickyFooter } from '../../functions/core/delivery/codehost-comment';
import { findingBody } from '../../functions/core/delivery/findings';
import { commentText } from '../../functions/core/delivery/mentions';
import type { Payload } from '../../functions/core/events/classify';

const MARKER = commentMarker('triage', 'evt_0m1k2j3h4a1b2c3d4e5f60718');
const STICKY = stickyMarker('review');
const FINDING = findingBody('review', { path: 'src/a.ts', line: 12, side: 'RIGHT', severity: 'minor', body: 'Division by zero.' }).split('\n').at(-1) as string;
const HEAD = 'c'.repeat(40);

/** A body in each place a code host sends one: issue/PR comment, review, review comment, GitLab note. */
function places(body: unknown): Array<[string, Payload]> {
  return [
    ['GitHub comment', { action: 'created', comment: { body, user: { login: 'someone', type: 'User' } } }],
    ['GitHub review', { action: 'submitted', review: { body, user: { login: 'someone', type: 'User' } } }],
    ['GitLab note', { object_kind: 'note', user: { username: 'someone' }, object_attributes: { note: body, noteable_type: 'MergeRequest' } }],
  ];
}

const ignored = (body: unknown) => places(body).map(([where, payload]) => [where, causedByHookagent(payload)]);
const all = (body: unknown, value: boolean) => places(body).map(([where]) => [where, value]);

/** What codehost_comment posts in `new` mode: the reply made inert and closed, then the event's marker. */
const newComment = (reply: string) => fitSealed(commentText(reply, undefined), GITHUB_COMMENT_LIMIT, `\n\n${MARKER}`);
/** What it posts in `sticky` mode: the footer names the commit and keeps earlier events' markers. */
const stickyComment = (reply: string) => fitSealed(commentText(reply, undefined), GITHUB_COMMENT_LIMIT,
  stickyFooter('review', 'evt_2', { kind: 'pull_request', key: 'k', commit: HEAD }, new Date('2026-01-02T03:04:05Z'), [commentMarker('review', 'evt_1')]));

/** Replies that leave something open or end in a container: hookagent closes them before its marker. */
const REPLIES: Record<string, string> = {
  plain: 'Looks good.',
  'unclosed fence': 'Fix:\n```ts\nconst a = 1;',
  'unclosed tilde fence in a list item': '- step one\n- step two\n  ~~~\n  code',
  'fence open in GitHub only (`<!doctype`)': '<!doctype\n```\ncode',
  'unclosed HTML comment': 'see <!-- hidden',
  'open details': '<details>\n<summary>more</summary>\n\ntext',
  'ends in a block quote': 'You wrote:\n\n> please review\n> carefully',
  'ends in a list item': '1. first\n2. second',
  'ends in indented code': 'Run:\n\n    make test',
  'quotes a marker itself': `Your comment said ${MARKER}`,
  'Windows line endings': 'one\r\ntwo\r\n```\r\nopen',
};

describe('every body hookagent writes is recognised', () => {
  test.each(Object.entries(REPLIES))('a new-mode comment, sticky comment and its edit: reply %s', (_, reply) => {
    for (const body of [newComment(reply), stickyComment(reply)]) {
      expect(ignored(body)).toEqual(all(body, true));
      // As a host may hand it back: CRLF line endings, a trailing line break.
      expect(ignored(`${body.replace(/\n/g, '\r\n')}\r\n`)).toEqual(all(body, true));
    }
  });

  test('review bodies and inline findings (with and without the hash of earlier versions)', () => {
    expect(ignored(`hookagent: 2 finding(s) on changed lines.\n\n${MARKER}`)).toEqual(all(0, true));
    expect(ignored(findingBody('review', { path: 'a.ts', line: 3, side: 'LEFT', severity: 'nit', body: 'open fence\n```js\nx()' }))).toEqual(all(0, true));
    expect(ignored(`**nit**: x\n\n<!-- hookagent-finding:review:RIGHT:1:${Buffer.from('a.ts').toString('base64')} -->`)).toEqual(all(0, true));
  });

  test('the marker ending the last line of a top-level paragraph (as earlier tests wrote it) counts too', () => {
    expect(ignored(`ok ${MARKER}`)).toEqual(all(0, true));
    expect(ignored(`Review done\nsee ${STICKY}  \n\n`)).toEqual(all(0, true));
  });

  test('a reply cut at the host\'s limit still ends in the marker', () => {
    const long = `${'word '.repeat(20_000)}\n\`\`\`\n${'code line\n'.repeat(5000)}`;
    const body = newComment(long);
    expect(body.length).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
    expect(ignored(body)).toEqual(all(0, true));
    const note = fitSealed(commentText(`${'a\n'.repeat(100_000)}~~~\n`, undefined), GITLAB_NOTE_LIMIT, `\n\n${MARKER}`);
    expect(ignored(note)).toEqual(all(0, true));
  });
});

describe('a marker that stands anywhere else does not count', () => {
  const bot = stickyComment('Two issues found. Ask `@hookagent-bot review` for another pass.');
  const quoted = bot.split('\n').map((line) => `> ${line}`.trimEnd()).join('\n');
  const cases: Record<string, string> = {
    'GitHub "Quote reply", the reply after the quote': `${quoted}\n\n@hookagent-bot review again please`,
    'the reply before the quote': `@hookagent-bot review again please\n\n${quoted}`,
    'a quote without a space': `@hookagent-bot please\n\n>${MARKER}`,
    'a nested quote': `@hookagent-bot please\n\n> > ${STICKY}`,
    'a quote continued lazily': `@hookagent-bot please\n\n> the bot wrote\nthis: ${MARKER}`,
    'a list item': `@hookagent-bot please\n\n- ${MARKER}`,
    'an ordered list item': `@hookagent-bot please\n\n1. ${FINDING}`,
    'a list item\'s second paragraph': `- @hookagent-bot please\n\n  ${MARKER}`,
    'a line in a list item continued lazily': `- @hookagent-bot please\nsee ${MARKER}`,
    'a closed fence': `@hookagent-bot why is this in your comment?\n\`\`\`\n${MARKER}\n\`\`\``,
    'an unclosed fence': `@hookagent-bot why is this in your comment?\n\`\`\`html\n${MARKER}`,
    'an unclosed tilde fence': `@hookagent-bot see\n~~~\n${STICKY}`,
    'a longer fence that a shorter one does not close': `@hookagent-bot see\n\`\`\`\`\n\`\`\`\n${MARKER}`,
    'a fence GitHub opens after `<!doctype`': `@hookagent-bot see\n\n<!doctype\n\`\`\`\n${MARKER}`,
    'indented code': `@hookagent-bot what is this:\n\n    ${MARKER}`,
    'indented by a few spaces': `@hookagent-bot\n\n   ${MARKER}`,
    'inline code': `@hookagent-bot what does \`${MARKER}\` mean?`,
    'inline code at the very end': `@hookagent-bot what does this mean: \`${MARKER}\``,
    'typed mid-text': `@hookagent-bot your comments carry <!-- hookagent: markers, why?`,
    'the marker first, the request after': `${MARKER}\n@hookagent-bot review`,
    'malformed: no name': '@hookagent-bot <!-- hookagent: -->',
    'malformed: a name hookagent refuses': '@hookagent-bot\n<!-- hookagent:Bad Name:evt_1 -->',
    'malformed: no spaces': '@hookagent-bot\n<!--hookagent:triage:evt_1-->',
    'malformed: a finding without its place': '@hookagent-bot\n<!-- hookagent-finding:review -->',
    'the reviewed-commit marker alone (never last in a comment)': `@hookagent-bot\n<!-- hookagent-reviewed:${HEAD} -->`,
    'a quoted marker as hookagent writes it inert': `@hookagent-bot\n<!-- (quoted) hookagent:triage:evt_1 -->`,
  };
  test.each(Object.entries(cases))('%s', (_, body) => {
    expect(ignored(body)).toEqual(all(body, false));
  });
});

describe('bad input', () => {
  test('bodies that are not strings, and payloads shaped otherwise, count for nothing', () => {
    for (const body of [undefined, null, 42, true, { body: MARKER }, [MARKER], `${MARKER}`.split('')]) {
      expect(ignored(body)).toEqual(all(body, false));
    }
    expect(causedByHookagent({ comment: MARKER })).toBe(false);
    expect(causedByHookagent({ comment: [{ body: MARKER }] })).toBe(false);
    expect(causedByHookagent({ review: null, comment: null })).toBe(false);
    // A note's text counts only on a note event.
    expect(causedByHookagent({ object_kind: 'issue', object_attributes: { note: MARKER } })).toBe(false);
    expect(causedByHookagent({ object_kind: 'note', object_attributes: 'x' })).toBe(false);
    // One body in hookagent's form is enough (a payload carrying two places).
    expect(causedByHookagent({ comment: { body: '@hookagent-bot hi' }, review: { body: MARKER } })).toBe(true);
  });

  test('huge bodies: longer than any comment hookagent writes, a quote-reply, one endless line', () => {
    // GitLab's note limit is the longest comment hookagent writes (codehost-comment.ts).
    expect(LONGEST_OWN_TEXT).toBe(Math.max(GITLAB_NOTE_LIMIT, GITHUB_COMMENT_LIMIT));
    expect(ignored(`${'x'.repeat(GITLAB_NOTE_LIMIT)}\n${MARKER}`)).toEqual(all(0, false));
    expect(ignored(`${'> quoted line\n'.repeat(60_000)}\n@hookagent-bot again\n\n> ${MARKER}`)).toEqual(all(0, false));
    expect(ignored(`${'```\n'.repeat(200_001)}${MARKER}`)).toEqual(all(0, false));
    expect(ignored(`${'<!-- hookagent:'.repeat(50_000)} -->`)).toEqual(all(0, false));
    expect(ignored(`${'- '.repeat(100_000)}${MARKER}`)).toEqual(all(0, false));
    // Even fences: every one closed, so the marker after them is hookagent's form.
    expect(ignored(`${'```\n'.repeat(200_000)}\n${MARKER}`)).toEqual(all(0, true));
    // Nested deeper than 100 columns of container prefixes before a marker line: not read (each
    // level and each blank line after would cost a pass), counted as ours.
    expect(ignored(`${'- '.repeat(30_000)}x\n${'\n'.repeat(300_000)}\`\`\`\n${MARKER}`)).toEqual(all(0, true));
    expect(ignored(`${'- '.repeat(30_000)}x\n${'\n'.repeat(300_000)}\`\`\`\nok ${MARKER}`)).toEqual(all(0, true));
  });
});
