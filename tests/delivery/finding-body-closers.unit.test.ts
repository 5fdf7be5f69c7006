/**
 * An inline finding is posted as `**severity**: body` followed by its hidden marker. What the
 * body leaves open is closed as it is posted, after the severity: a body that begins with
 * ``` opens no fence there (a fence starts a line), so no closing fence is added. Before,
 * the closers were worked out from the body alone: a ``` line was appended, which opened a
 * fence, and the hidden marker after it showed as code.
 */
import { findingBody, type Finding } from '../../functions/core/delivery/findings';

const finding = (body: string): Finding => ({ path: 'src/f.ts', line: 3, side: 'RIGHT', severity: 'major', body });

test('a body that begins with a fence gets no closing fence: the marker stays a hidden comment', () => {
  const posted = findingBody('review', finding('```sh\nrm -rf "$DIR"'));
  expect(posted.split('\n').filter((line) => /^\s*```\s*$/.test(line))).toEqual([]);
  expect(posted).toMatch(/\n\n<!-- hookagent-finding:review:RIGHT:3:/);
});

test('a fence the body opens on a line of its own is still closed before the marker', () => {
  const posted = findingBody('review', finding('Run this:\n```sh\nrm -rf "$DIR"'));
  const fences = posted.split('\n').filter((line) => /^\s*```/.test(line));
  expect(fences).toHaveLength(2);
  expect(posted.indexOf(fences[1]!)).toBeLessThan(posted.indexOf('<!-- hookagent-finding:'));
});
