/**
 * A review of a commit force-pushed away, delivered while neither the sticky comment's
 * commit nor the event's is the head. A was pushed, amended into A2 and force-pushed,
 * then amended into A3 and force-pushed (all three are children of P): A2's review shows
 * while A3's is still running, and A's slower run finishes now. A is no longer in the pull
 * request (GitHub compare A3...A answers `diverged`, GitLab's merge_base of A and A3 is P),
 * so its review neither replaces the comment nor posts its findings on A3's diff. A push
 * still on the branch (an ancestor of the head) is judged against the comment's commit as
 * before. The fake host answers compare and merge_base from its commit graph.
 */
import type { Config } from '../../functions/core/config/types';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { reviewedCommitOf } from '../../functions/core/events/loop-guard';
import type { Source } from '../../functions/core/types';
import { codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { deliverComment, reviewRequest } from '../support/review-request';

const sha = (c: string) => c.repeat(40 / c.length);
const [P, A, A2, A3] = [sha('1'), sha('a'), sha('a2'), sha('a3')];
/** Three pushes on one line: B1, then B2, then B3. */
const [B1, B2, B3] = [sha('b1'), sha('b2'), sha('b3')];
const short = (s: string) => s.slice(0, 12);
let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
}, { samplePatch: true });
/** The pull/merge request's head as both hosts show it now. */
const headAt = (head: string) => {
  host.pullHead = head;
  host.mrHead = head;
};
beforeEach(() => {
  host.history = { [P]: [], [A]: [P], [A2]: [P], [A3]: [P], [B1]: [P], [B2]: [B1], [B3]: [B2] };
  headAt(A3);
});

const settings = (): Config['delivery'] => codehostDelivery(host, 1000);
const request = (reply: string, eventId: string, commit: string, source: Source = 'github') => reviewRequest(settings(), reply, eventId, commit, source);
const deliver = (r: DeliveryRequest) => deliverComment(settings(), r);
const githubSticky = () => host.comments.get('/repos/octo/widgets/issues/7')!;
const gitlabSticky = () => [...host.comments.entries()].find(([k]) => k.startsWith('/api/v4/'))![1];
const shown = (body: string) => ({ shows: body.split('\n')[0], lastReviewed: reviewedCommitOf(body) });
const FINDING: Finding = { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero (amended away).' };
const gone = (event: string, head: string) => `(not replaced: this event's ${short(event)} is no longer in the pull request; the head is ${short(head)})`;

test('GitHub: while A2\'s review shows and A3 (the head) is reviewed, the slower review of A, force-pushed away, neither replaces it nor posts its findings', async () => {
  expect(await deliver(request('Review of A2.', 'evt_a2', A2))).toMatchObject({ status: 'delivered' });
  const outcome = await deliver(request(withFindings('Review of A: critical bug in f().', [FINDING]), 'evt_a', A));
  expect(outcome).toMatchObject({ status: 'delivered', detail: expect.stringContaining(gone(A, A3)) });
  expect(githubSticky()).toHaveLength(1);
  expect({ ...shown(githubSticky()[0]!.body), inlineReviews: host.reviews.length }).toEqual({ shows: 'Review of A2.', lastReviewed: A2, inlineReviews: 0 });
  // A3's review, when it arrives, replaces it.
  expect(await deliver(request('Review of A3.', 'evt_a3', A3))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
  expect(shown(githubSticky()[0]!.body)).toEqual({ shows: 'Review of A3.', lastReviewed: A3 });
});

test('GitHub: a push still on the branch is judged against the comment\'s commit as before', async () => {
  headAt(B3);
  await deliver(request('Review of B1.', 'evt_b1', B1));
  // B2 is newer than B1 and an ancestor of the head B3: it replaces B1's review, findings and all.
  expect(await deliver(request(withFindings('Review of B2.', [FINDING]), 'evt_b2', B2))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
  expect({ ...shown(githubSticky()[0]!.body), inlineReviews: host.reviews.length }).toEqual({ shows: 'Review of B2.', lastReviewed: B2, inlineReviews: 1 });
  // B1 again (a redelivered push): older than B2, so not.
  expect(await deliver(request('Review of B1 again.', 'evt_b1_again', B1))).toMatchObject({ status: 'delivered', detail: expect.stringContaining(`(not replaced: it already reviews ${short(B2)}, newer than this event's ${short(B1)})`) });
});

test('GitHub: a commit the head as read does not contain yet (a read that lags the push) is reviewed as before', async () => {
  headAt(B2);
  await deliver(request('Review of B1.', 'evt_b1', B1));
  expect(await deliver(request('Review of B3.', 'evt_b3', B3))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
  expect(shown(githubSticky()[0]!.body)).toEqual({ shows: 'Review of B3.', lastReviewed: B3 });
});

test('GitHub: when the host cannot compare the event\'s commit with the head, the comment is replaced as before', async () => {
  await deliver(request('Review of A2.', 'evt_a2', A2));
  const unknown = sha('c0');
  expect(await deliver(request('Review of a commit the host does not know.', 'evt_c', unknown))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
  expect(host.server.requests.some((r) => r.url.startsWith(`/repos/octo/widgets/compare/${A3}...${unknown}`))).toBe(true);
  expect(shown(githubSticky()[0]!.body)).toEqual({ shows: 'Review of a commit the host does not know.', lastReviewed: unknown });
});

test('GitLab: the slower review of A, force-pushed away, neither replaces A2\'s note nor opens discussions', async () => {
  expect(await deliver(request('MR review of A2.', 'evt_ga2', A2, 'gitlab'))).toMatchObject({ status: 'delivered' });
  const outcome = await deliver(request(withFindings('MR review of A.', [FINDING]), 'evt_ga', A, 'gitlab'));
  expect(outcome).toMatchObject({ status: 'delivered', detail: expect.stringContaining(gone(A, A3)) });
  expect(gitlabSticky()).toHaveLength(1);
  expect({ ...shown(gitlabSticky()[0]!.body), discussions: host.discussions.length }).toEqual({ shows: 'MR review of A2.', lastReviewed: A2, discussions: 0 });
  expect(await deliver(request('MR review of A3.', 'evt_ga3', A3, 'gitlab'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
  expect(shown(gitlabSticky()[0]!.body)).toEqual({ shows: 'MR review of A3.', lastReviewed: A3 });
});

test('GitLab: a push still on the branch replaces the review of an older one, with its discussions', async () => {
  headAt(B3);
  await deliver(request('MR review of B1.', 'evt_gb1', B1, 'gitlab'));
  expect(await deliver(request(withFindings('MR review of B2.', [FINDING]), 'evt_gb2', B2, 'gitlab'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
  expect({ ...shown(gitlabSticky()[0]!.body), discussions: host.discussions.length }).toEqual({ shows: 'MR review of B2.', lastReviewed: B2, discussions: 1 });
});
