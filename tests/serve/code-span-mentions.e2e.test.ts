/**
 * README Security table, "Ping hundreds of people in a GitHub/GitLab comment (`@user`,
 * `@org/team`, `@all`, …) | Every mention outside code gets a zero-width space after the `@`
 * … The text is read as GitHub and GitLab render it", and the same for references ("each
 * reference outside code gets a zero-width space after its sigil"). Through `hookagent
 * serve`, an `--agent none` subscription quoting the pull request's body to a local server
 * speaking GitHub's wire format:
 * - a code span runs over a line break (CommonMark pairs backticks within the paragraph),
 *   so the backtick on the next line closes it and what follows is text, not code;
 * - a fence opened inside a list item ends with the item: the unindented line after it is a
 *   new paragraph, and no fence closer is added that would show the footer as code.
 *
 * GitHub renders with cmark-gfm (GFM spec 0.29 and extensions), which ends code spans,
 * paragraphs and HTML blocks elsewhere than commonmark.js (CommonMark 0.31); text is code
 * only if both readings say so (hunt 11). Each rendering below was checked with
 * github/cmark-gfm (`--unsafe -e footnotes -e table -e strikethrough -e autolink -e tagfilter
 * -e tasklist`):
 *  1. `<!-- a--b ` -->` is no comment in GFM (its text may not contain `--`);
 *  2. a footnote definition (`[^note]:`) ends a paragraph in cmark-gfm;
 *  3. a type-7 HTML block (`<span>`) starts where commonmark.js continues a block quote's
 *     paragraph lazily;
 *  4. after an unmatched `` `` `` run, cmark's backtick memo refuses a later span;
 *  5. `<!doctype` starts no HTML block in GFM (declarations are uppercase), so the fence after
 *     it is open and gets its closer before the footer.
 */
import { eventually } from '../support/serve';
import { useServeWithGithub } from '../support/serve-github';

const Z = '\u200b';

const h = useServeWithGithub('code-span', async ({ hk, start }) => {
  await start();
  expect((await hk('webhook', 'subscribe', 'notify', '--events', 'pull_request.opened', '--agent', 'none', '--prompt', 'New PR:\n\n{pull_request.body}', '--deliver', 'codehost_comment')).code).toBe(0);
});

async function commentFor(number: number, prBody: string): Promise<string> {
  const body = JSON.stringify({ action: 'opened', number, pull_request: { number, title: 't', body: prBody, head: { sha: 'c'.repeat(40) } }, repository: { full_name: 'octo/widgets' } });
  expect((await h.send('pull_request', body, `code-span-${number}`)).status).toBe(202);
  const thread = `/repos/octo/widgets/issues/${number}`;
  await eventually(() => (h.host.comments.get(thread)?.length ?? 0) > 0, 'the comment');
  return h.host.comments.get(thread)![0]!.body;
}

test('a mention and a reference after a code span that runs over a line break are made inert', async () => {
  const comment = await commentFor(9, 'Steps: run `make\ntest` then see #34 and ping @acme/everyone `now`');
  expect(comment).toContain('Steps: run `make\ntest` then see #');
  // Outside code, as GitHub renders it: not linked, nobody notified, no cross-reference.
  expect(comment).toContain(`@${Z}acme/everyone`);
  expect(comment).toContain(`see #${Z}34`);
}, 60_000);

test('a mention and a reference after a fence that ended with its list item are made inert, and no fence is added', async () => {
  const comment = await commentFor(10, '- item\n  ```\n@alice and #12');
  expect(comment).toContain('- item\n  ```\n');
  expect(comment).toContain(`@${Z}alice and #${Z}12`);
  // Nothing is left open, so nothing is appended: no fence closer, which would open a fence and show the footer as code.
  expect(comment).toContain(`@${Z}alice and #${Z}12\n\n---\n<sub>hookagent`);
}, 60_000);

// GitHub (cmark-gfm): <p>Thanks! &lt;!-- a--b <code>--&gt;</code>ping @acme/everyone and #34` done</p>
test('1. after a comment GFM does not read as one (`--` inside), the mention and reference are made inert', async () => {
  const comment = await commentFor(21, 'Thanks! <!-- a--b ` --> `ping @acme/everyone and #34` done');
  expect(comment).toContain(`@${Z}acme/everyone`);
  expect(comment).toContain(`#${Z}34`);
}, 60_000);

// GitHub (cmark-gfm): <p>Thanks! cc `@acme/everyone #34</p> (the footnote definition is a block of its own)
test('2. before a footnote definition that ends the paragraph, the mention and reference are made inert', async () => {
  const comment = await commentFor(22, 'Thanks! cc `@acme/everyone #34\n[^note]: ` see above');
  expect(comment).toContain(`@${Z}acme/everyone`);
  expect(comment).toContain(`#${Z}34`);
}, 60_000);

// GitHub (cmark-gfm): <blockquote><p>quoted</p></blockquote> then the raw HTML block "<span>\nsee `@acme/everyone #34`"
test('3. in an HTML block that starts after a block quote (no lazy continuation for cmark), the mention and reference are made inert', async () => {
  const comment = await commentFor(23, '> quoted\n<span>\nsee `@acme/everyone #34`');
  expect(comment).toContain(`@${Z}acme/everyone`);
  expect(comment).toContain(`#${Z}34`);
}, 60_000);

// GitHub (cmark-gfm): <p>Use `` for this, <code>a</code> too, and `@acme/everyone #34`</p>
test('4. after an unmatched `` run and one code span, a later backtick pair that cmark-gfm does not read as code: mention and reference made inert', async () => {
  const comment = await commentFor(24, 'Use `` for this, `a` too, and `@acme/everyone #34`');
  expect(comment).toContain(`@${Z}acme/everyone`);
  expect(comment).toContain(`#${Z}34`);
}, 60_000);

// GitHub (cmark-gfm): <p>&lt;!doctype</p><pre><code>\n&lt;!-- --&gt;\n\n---\n&lt;sub&gt;hookagent · notify …
test('5. a fence GitHub opens after `<!doctype` (no HTML block in GFM) is closed before the footer', async () => {
  const comment = await commentFor(25, 'LGTM.\n\n<!doctype\n```');
  const beforeFooter = comment.slice(0, comment.indexOf('\n---\n<sub>hookagent'));
  // Lines GitHub reads as fence lines before the footer: an odd count leaves the footer inside a code block.
  expect(beforeFooter.split('\n').filter((line) => /^ {0,3}```\s*$/.test(line)).length % 2).toBe(0);
}, 60_000);
