/**
 * An inline finding is posted as `**severity**: body` followed by its hidden marker; a body
 * that opens with a block (a fence, a list…) goes after `**severity**` and a blank line, so
 * its fence is a fence (a ```suggestion block stays one: reviewq-suggestion). What the body
 * leaves open is closed before the marker, so the marker stays a hidden comment.
 */
import { findingBody, type Finding } from '../../functions/core/delivery/findings';

const finding = (body: string): Finding => ({ path: 'src/f.ts', line: 3, side: 'RIGHT', severity: 'major', body });

test('a body that begins with a fence keeps it a fence, closed before the marker: the marker stays a hidden comment', () => {
  const posted = findingBody('review', finding('```sh\nrm -rf "$DIR"'));
  expect(posted).toMatch(/^\*\*major\*\*\n\n```sh\nrm -rf "\$DIR"\n```\n\n<!-- hookagent-finding:review:RIGHT:3:/);
});

test('a fence the body opens on a line of its own is still closed before the marker', () => {
  const posted = findingBody('review', finding('Run this:\n```sh\nrm -rf "$DIR"'));
  const fences = posted.split('\n').filter((line) => /^\s*```/.test(line));
  expect(fences).toHaveLength(2);
  expect(posted.indexOf(fences[1]!)).toBeLessThan(posted.indexOf('<!-- hookagent-finding:'));
});
