/**
 * An outdated GitLab discussion does not count as "already posted". GitLab never sends a
 * note's `line` (GitHub's outdated form, `line: null`): a diff note whose line changed in a
 * later push keeps its `position` at the old version's diff_refs
 * (Discussions::UpdateDiffPositionService moves it forward only when its line is unchanged;
 * the merge request shows "changed this line in version N" and collapses it). So a note
 * counts only when its position is of the live diff_refs (head_sha and start_sha).
 */
import { findingBody, withFindings, type Finding } from '../../functions/core/delivery/findings';
import { FAKE_BOT, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';
import { deliverComment, reviewRequest } from '../support/review-request';

const OLD_HEAD = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
/** The head now (the merge request's diff_refs). */
const HEAD = 'cccccccccccccccccccccccccccccccccccccccc';
const BASE = 'b'.repeat(40);
const MR = '/api/v4/projects/1/merge_requests/1';
let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
}, { samplePatch: true });
beforeEach(() => {
  host.extra = (req, res, url) => (req.method === 'GET' && url.pathname === MR
    ? (sendJson(res, 200, { iid: 1, sha: HEAD, diff_refs: { base_sha: BASE, start_sha: BASE, head_sha: HEAD } }), true) : false);
});

const FINDING: Finding = { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero.' };
/** Review 1's discussion of FINDING, its position at `head`. */
const discussionAt = (head: string) => ({ id: 'd1', notes: [{ body: findingBody('review', FINDING), author: { id: FAKE_BOT.id, username: FAKE_BOT.login },
  position: { position_type: 'text', base_sha: BASE, start_sha: BASE, head_sha: head, old_path: 'src/f.ts', new_path: 'src/f.ts', new_line: 12, old_line: null } }] });

async function review2(): Promise<string> {
  const settings = codehostDelivery(host, 1000);
  expect(await deliverComment(settings, reviewRequest(settings, withFindings('Review 2.', [FINDING]), 'evt_o2', HEAD, 'gitlab'))).toMatchObject({ status: 'delivered' });
  return host.comments.get(MR)![0]!.body;
}

test('a discussion GitLab shows as outdated (its position is of an older diff version) does not keep the finding off the new code', async () => {
  // Review 1 at OLD_HEAD put the finding on line 12; the author then pushed a change to that very line.
  host.discussions.push(discussionAt(OLD_HEAD));
  const summary = await review2();
  expect(summary).not.toContain('already posted');
  expect(summary).toContain('1 finding(s) are posted as inline comments on the diff.');
  expect(host.discussions).toHaveLength(2);
  expect(host.discussions[1]!.notes[0]!.position).toMatchObject({ head_sha: HEAD, new_line: 12 });
});

test('a discussion of the live diff (GitLab moved its position forward: its line is unchanged) still counts as already posted', async () => {
  host.discussions.push(discussionAt(HEAD));
  const summary = await review2();
  expect(summary).toContain('1 finding(s) were already posted as inline comments on the same lines by an earlier review.');
  expect(host.discussions).toHaveLength(1);
});
