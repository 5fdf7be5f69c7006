/**
 * Amend + force-push, reviewed side by side (hunt 9 D3). A is pushed, then amended into A2
 * and force-pushed: A2's parent is A's parent, and A is gone from the pull request. A is
 * not an ancestor of A2 (GitHub's compare A2...A answers `diverged`, GitLab's merge_base of
 * the two is their common parent), so the ancestor check of hunt 8 D5 let A's slower
 * review replace the review of the head A2, name a commit no longer in the pull request,
 * and post A's inline findings on A2's diff. A sticky comment that reviews the head now is
 * left alone by any review of a commit that is not the head, whatever the history; a
 * force-push back to A makes A the head, and then its review replaces it.
 */
import type { Config } from '../../functions/core/config/types';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { reviewedCommitOf } from '../../functions/core/events/loop-guard';
import type { Source } from '../../functions/core/types';
import { SAMPLE_PATCH, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';
import { deliverComment, reviewRequest } from '../support/review-request';

const PARENT = '1111111111111111111111111111111111111111';
const HEAD_A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const HEAD_A2 = 'a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2';
let host: FakeCodehost;
/** The pull/merge request's head as the host shows it now. */
let head = HEAD_A2;
useFakeCodehost((started) => {
  host = started;
}, { samplePatch: true });
beforeEach(() => {
  // A was pushed, then amended into A2 and force-pushed: the head is A2.
  head = HEAD_A2;
  host.extra = (_req, res, url) => {
    if (url.pathname === '/repos/octo/widgets/pulls/7') return sendJson(res, 200, { number: 7, state: 'open', head: { sha: head } }), true;
    // What GitHub answers for two siblings, either way round.
    if (/^\/repos\/octo\/widgets\/compare\//.test(url.pathname)) return sendJson(res, 200, { status: 'diverged', ahead_by: 1, behind_by: 1, total_commits: 1, commits: [], files: [] }), true;
    if (url.pathname === '/api/v4/projects/1/merge_requests/1') return sendJson(res, 200, { iid: 1, sha: head, diff_refs: { base_sha: PARENT, start_sha: PARENT, head_sha: head } }), true;
    if (url.pathname === '/api/v4/projects/1/repository/merge_base') return sendJson(res, 200, { id: PARENT }), true;
    return false;
  };
});

const settings = (): Config['delivery'] => codehostDelivery(host, 1000);
const request = (reply: string, eventId: string, sha: string, source: Source = 'github') => reviewRequest(settings(), reply, eventId, sha, source);
const deliver = (r: DeliveryRequest) => deliverComment(settings(), r);
const githubSticky = () => host.comments.get('/repos/octo/widgets/issues/7')!;
const gitlabSticky = () => [...host.comments.entries()].find(([k]) => k.startsWith('/api/v4/'))![1];
const FINDING: Finding = { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero (fixed in the amended commit).' };

test('GitHub: the review of a commit replaced by a force-push, delivered last, does not replace the head\'s review nor posts its findings', async () => {
  expect(await deliver(request('Review of A2 (the head): all good.', 'evt_a2', HEAD_A2))).toMatchObject({ status: 'delivered' });
  // The slower run, for the force-pushed-away A, finishes now.
  const outcome = await deliver(request(withFindings('Review of A: critical bug in f().', [FINDING]), 'evt_a', HEAD_A));
  expect(outcome).toMatchObject({ status: 'delivered', detail: expect.stringContaining(`not replaced: it already reviews ${HEAD_A2.slice(0, 12)}, the head now`) });
  expect(githubSticky()).toHaveLength(1);
  const body = githubSticky()[0]!.body;
  expect({ shows: body.split('\n')[0], lastReviewed: reviewedCommitOf(body), inlineReviews: host.reviews.length })
    .toEqual({ shows: 'Review of A2 (the head): all good.', lastReviewed: HEAD_A2, inlineReviews: 0 });
});

test('GitHub: after a force-push back to A (the head again), A\'s review replaces the review of A2', async () => {
  await deliver(request('Review of A2.', 'evt_a2', HEAD_A2));
  head = HEAD_A;
  expect(await deliver(request(withFindings('Review of A, the head again.', [FINDING]), 'evt_a_again', HEAD_A))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
  const body = githubSticky()[0]!.body;
  expect({ shows: body.split('\n')[0], lastReviewed: reviewedCommitOf(body), inlineReviews: host.reviews.length })
    .toEqual({ shows: 'Review of A, the head again.', lastReviewed: HEAD_A, inlineReviews: 1 });
});

test('GitHub: A2 amended again into A3 while A2\'s review is the sticky one: A3\'s review replaces it', async () => {
  const HEAD_A3 = 'a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3';
  await deliver(request('Review of A2.', 'evt_a2', HEAD_A2));
  head = HEAD_A3;
  expect(await deliver(request('Review of A3.', 'evt_a3', HEAD_A3))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
  expect(reviewedCommitOf(githubSticky()[0]!.body)).toBe(HEAD_A3);
});

test('GitLab: the review of a commit replaced by a force-push does not replace the head\'s review nor opens its discussions', async () => {
  expect(await deliver(request('MR review of A2 (the head).', 'evt_ga2', HEAD_A2, 'gitlab'))).toMatchObject({ status: 'delivered' });
  expect(await deliver(request(withFindings('MR review of A.', [FINDING]), 'evt_ga', HEAD_A, 'gitlab'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('not replaced') });
  const note = gitlabSticky();
  expect(note).toHaveLength(1);
  expect({ shows: note[0]!.body.split('\n')[0], lastReviewed: reviewedCommitOf(note[0]!.body), discussions: host.discussions.length })
    .toEqual({ shows: 'MR review of A2 (the head).', lastReviewed: HEAD_A2, discussions: 0 });
});

test('GitLab: after a force-push back to A, A\'s review replaces the review of A2', async () => {
  await deliver(request('MR review of A2.', 'evt_ga2', HEAD_A2, 'gitlab'));
  head = HEAD_A;
  expect(await deliver(request('MR review of A, the head again.', 'evt_ga_again', HEAD_A, 'gitlab'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
  expect(reviewedCommitOf(gitlabSticky()[0]!.body)).toBe(HEAD_A);
});
