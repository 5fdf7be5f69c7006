/**
 * A finding whose body opens with a ```suggestion block (hunt 12 D2). GitHub shows a review
 * comment's ```suggestion block as a suggested change ("Commit suggestion"; it replaces the
 * commented line), GitLab its ```suggestion:-0+0 block likewise ("Apply suggestion"). A
 * fence must start its own line. hookagent posted "**<severity>**: " and the body on the
 * SAME line, so the fence was no fence (stray backticks, no suggestion), and the closer it
 * added for the fence it thought open turned the explanation into a code block. The
 * severity now gets its own paragraph when the body opens with a block. A finding folded
 * into the summary keeps its lines (a code sample keeps its indentation) under its list item.
 * (SAMPLE_PATCH: new line 12 is `  const c = b / 0;`.)
 */
import { findingBody, withFindings, type Finding } from '../../functions/core/delivery/findings';
import { codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { deliverComment, reviewRequest } from '../support/review-request';

const HEAD = 'c'.repeat(40);
let host: FakeCodehost;
useFakeCodehost((h) => {
  host = h;
}, { samplePatch: true });

const finding = (body: string, line = 12): Finding => ({ path: 'src/f.ts', line, side: 'RIGHT', severity: 'critical', body });
/** The fence lines of a Markdown text, as CommonMark reads them: a fence line starts the line (up to 3 spaces). */
const fenceLines = (text: string) => text.split(/\r?\n/).filter((l) => /^ {0,3}(```|~~~)/.test(l));
const opener = { github: '```suggestion', gitlab: '```suggestion:-0+0' };
const settings = () => codehostDelivery(host, 1000);
const posted = (source: 'github' | 'gitlab') => (source === 'github' ? host.reviews[0]?.comments?.[0]?.body : host.discussions[0]?.notes[0]?.body) as string | undefined;
const summary = (source: 'github' | 'gitlab') => [...host.comments.entries()].find(([k]) => k.startsWith(source === 'github' ? '/repos/' : '/api/v4/'))?.[1][0]?.body ?? '';

describe.each(['github', 'gitlab'] as const)('%s', (source) => {
  test('a suggestion block that opens the finding is posted as a suggestion block, the explanation as text', async () => {
    const body = `${opener[source]}\n  const c = b === 0 ? 0 : a / b;\n\`\`\`\nDivision by zero: \`b\` is always 0 here.`;
    const outcome = await deliverComment(settings(), reviewRequest(settings(), withFindings('Verdict: one critical finding.', [finding(body)]), `evt_sugg_${source}`, HEAD, source));
    expect(outcome).toMatchObject({ status: 'delivered' });
    const text = posted(source)!;
    // The suggestion opens a line, its code follows, one fence closes it; nothing else is a fence.
    expect(fenceLines(text)).toEqual([opener[source], '```']);
    expect(text.startsWith(`**critical**\n\n${opener[source]}\n  const c = b === 0 ? 0 : a / b;\n\`\`\`\nDivision by zero`)).toBe(true);
  });

  test('a body of plain text keeps the severity on its line', async () => {
    await deliverComment(settings(), reviewRequest(settings(), withFindings('Verdict.', [finding('Division by zero.\n```suggestion\n  const c = 0;\n```')]), `evt_plain_${source}`, HEAD, source));
    const text = posted(source)!;
    expect(text.startsWith('**critical**: Division by zero.\n```suggestion\n')).toBe(true);
    expect(fenceLines(text)).toEqual(['```suggestion', '```']);
  });

  test('a folded finding keeps its code block, indentation and explanation under its list item', async () => {
    const body = '```python\ndef ratio(a, b):\n    return a / b if b else 0\n```\nGuard the division.';
    await deliverComment(settings(), reviewRequest(settings(), withFindings('Verdict.', [finding(body, 99)]), `evt_folded_${source}`, HEAD, source));
    expect(summary(source)).toContain([
      '- **critical** `src/f.ts` line 99 _(outside the diff)_:',
      '  ```python',
      '  def ratio(a, b):',
      '      return a / b if b else 0',
      '  ```',
      '  Guard the division.',
    ].join('\n'));
  });
});

test('a body that opens a fence it leaves open (cut at its cap) is a fence, closed before the hidden marker', () => {
  const posted = findingBody('review', { path: 'src/f.ts', line: 3, side: 'RIGHT', severity: 'major', body: '```sh\nrm -rf "$DIR"' });
  expect(posted).toMatch(/^\*\*major\*\*\n\n```sh\nrm -rf "\$DIR"\n```\n\n<!-- hookagent-finding:review:RIGHT:3:[A-Za-z0-9+/=]+:[0-9a-f]{12} -->$/);
});
