/**
 * GitHub takes a pull request review whole or refuses it (422) without naming the comment
 * it could not place (hunt 9 D2). One such comment used to fold every finding of the
 * review into the summary. Now a refused review is sent again in halves until the refused
 * comments stand alone: only those are folded, the others are posted inline, each once,
 * within a bounded number of sends and the review's one rate-limit budget.
 * hookagent's own trigger was a push between its two reads: the head (`commit_id`), then
 * the files (the lines checked). The head is now read again after the files, and the files
 * again when it moved, so the review names the head whose diff was checked.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../functions/core/config/types';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { Source } from '../../functions/core/types';
import { FAKE_BOT, SAMPLE_PATCH, SAMPLE_PATCH_PUSHED, codehostDelivery, rightLines, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson, type Recorded } from '../support/local-http';

const HEAD_A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const HEAD_B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
// B = A plus a second hunk at new 39..42 in src/f.ts.
const PATCH_B = SAMPLE_PATCH_PUSHED;
const patchAt: Record<string, string> = { [HEAD_A]: SAMPLE_PATCH, [HEAD_B]: PATCH_B };


type Review = { commit_id?: string; comments: Array<{ path: string; line: number; side: string; body: string }> };
let host: FakeCodehost;
/** The pull request's head now. */
let head = HEAD_A;
/** Where the push to B lands: right after the head read (`GET /pulls/7`), or never. */
let pushAfterHeadRead = false;
/** Lines GitHub cannot resolve, whatever the diff says. */
let unresolvable = new Set<number>();
/** Called on each review GitHub is about to take; true: answered (e.g. made, then a 502). */
let onTaken: ((review: Review, res: Parameters<NonNullable<FakeCodehost['extra']>>[1]) => boolean) | undefined;
useFakeCodehost((started) => {
  host = started;
});
beforeEach(() => {
  head = HEAD_A;
  pushAfterHeadRead = false;
  unresolvable = new Set();
  onTaken = undefined;
  host.extra = (req, res, url) => {
    if (req.method === 'GET' && url.pathname === '/repos/octo/widgets/pulls/7') {
      sendJson(res, 200, { number: 7, state: 'open', head: { sha: head } });
      if (pushAfterHeadRead) head = HEAD_B;
      pushAfterHeadRead = false;
      return true;
    }
    if (req.method === 'GET' && url.pathname === '/repos/octo/widgets/pulls/7/files') {
      sendJson(res, 200, [{ filename: 'src/f.ts', status: 'modified', additions: 4, deletions: 1, patch: patchAt[head] }]);
      return true;
    }
    if (req.method === 'POST' && url.pathname === '/repos/octo/widgets/pulls/7/reviews') {
      const review = JSON.parse(req.body) as Review;
      // GitHub reads each line in the diff of the commit the review names.
      const lines = rightLines(patchAt[review.commit_id ?? head]!);
      if (review.comments.some((c) => !lines.has(c.line) || unresolvable.has(c.line))) {
        sendJson(res, 422, { message: 'Unprocessable Entity', errors: ['Line could not be resolved'], status: '422' });
        return true;
      }
      host.reviews.push(review);
      host.reviewComments.push(...review.comments.map((c) => ({ ...c, user: { ...FAKE_BOT, type: 'User' } })));
      if (!onTaken?.(review, res)) sendJson(res, 200, { id: host.reviews.length, state: 'COMMENTED' });
      return true;
    }
    return false;
  };
});

let clock = 0;
const sleep = async (ms: number) => {
  clock += ms;
};
beforeEach(() => {
  clock = 0;
});
const settings = (): Config['delivery'] => codehostDelivery(host, 2000);
const payload = { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD_A } } };
const request = (findings: Finding[], source: Source = 'github', mr?: Record<string, unknown>): DeliveryRequest => ({
  subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
  message: { v: 1, event_id: 'evt_a', subscription: 'review', source, event: source === 'github' ? 'pull_request' : 'merge_request', delivery_id: 'd', received_at: '' },
  payload: mr ?? payload, reply: withFindings('Verdict.', findings), settings: settings(), logger: jsonLogger(() => {}),
});
const deliver = (r: DeliveryRequest) => createDeliveryTargets(settings(), sleep).codehost_comment.deliver(r);
const summary = () => host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
const reviewPosts = () => host.server.requests.filter((r: Recorded) => r.method === 'POST' && r.url.endsWith('/reviews'));
const postedLines = () => host.reviewComments.map((c) => c.line as number).sort((a, b) => a - b);
const finding = (line: number, body: string): Finding => ({ path: 'src/f.ts', line, side: 'RIGHT', severity: 'major', body });
/** Five findings on A's five changed-hunk lines (new 10..14). */
const FIVE = [10, 11, 12, 13, 14].map((line) => finding(line, `Problem on line ${line}.`));

test('a push between the head read and the files read: the review names the head whose diff was checked', async () => {
  pushAfterHeadRead = true;
  const findings = [finding(11, 'b changed from 2 to 3: why?'), finding(12, 'Division by zero.'), finding(40, 'eval of user input.')];
  expect(await deliver(request(findings))).toMatchObject({ status: 'delivered' });
  // Line 40 is only in B's diff, which was the one read: the review names B, and GitHub takes all three.
  expect({ commitIds: reviewPosts().map((r) => (JSON.parse(r.body) as Review).commit_id), inline: postedLines() }).toEqual({ commitIds: [HEAD_B], inline: [11, 12, 40] });
  expect(summary()).toContain('3 finding(s) are posted as inline comments');
  expect(summary()).not.toContain('did not take');
});

test('GitHub refuses one comment (422): only that finding is folded, the other four are posted inline, each once', async () => {
  unresolvable = new Set([13]);
  expect(await deliver(request(FIVE))).toMatchObject({ status: 'delivered' });
  expect(postedLines()).toEqual([10, 11, 12, 14]);
  expect(summary()).toContain('4 finding(s) are posted as inline comments');
  expect(summary()).toContain('`src/f.ts` line 13: Problem on line 13. _(GitHub did not take the inline review (http_422))_');
  expect(summary()).not.toContain('line 12: Problem on line 12.');
  // Found by halves: not one review per finding, and never the whole review twice.
  expect(reviewPosts().length).toBeLessThanOrEqual(5);
  expect(reviewPosts().filter((r) => (JSON.parse(r.body) as Review).comments.length === 5)).toHaveLength(1);
});

test('a review GitHub refuses for every comment: every finding is folded, within a bounded number of sends', async () => {
  unresolvable = new Set([10, 11, 12, 13, 14]);
  const thirty = Array.from({ length: 30 }, (_, i) => finding(10 + (i % 5), `Problem ${i}.`));
  expect(await deliver(request(thirty))).toMatchObject({ status: 'delivered' });
  expect(host.reviews).toHaveLength(0);
  expect(summary().match(/_\(GitHub did not take the inline review \(http_422\)\)_/g)).toHaveLength(30);
  expect(reviewPosts().length).toBeGreaterThan(1);
  expect(reviewPosts().length).toBeLessThanOrEqual(20);
});

test('a part GitHub made but answered 502 is found by its markers: no finding is posted twice', async () => {
  unresolvable = new Set([10]);
  let lost = true;
  onTaken = (_review, res) => {
    if (!lost) return false;
    lost = false;
    sendJson(res, 502, { message: 'Bad Gateway' });
    return true;
  };
  expect(await deliver(request(FIVE))).toMatchObject({ status: 'delivered' });
  expect(postedLines()).toEqual([11, 12, 13, 14]);
  expect(summary()).toContain('4 finding(s) are posted as inline comments');
  expect(summary()).toContain('line 10: Problem on line 10. _(GitHub did not take the inline review (http_422))_');
});

test('the parts share the review\'s rate-limit budget: past it, the rest is folded with the limit, not sent', async () => {
  unresolvable = new Set([10]);
  // Every part GitHub would take meets the secondary rate limit (403, Retry-After: 10).
  const limited = host.extra!;
  host.extra = (req, res, url) => {
    if (req.method === 'POST' && url.pathname.endsWith('/reviews') && !(JSON.parse(req.body) as Review).comments.some((c) => unresolvable.has(c.line))) {
      sendJson(res, 403, { message: 'You have exceeded a secondary rate limit' }, { 'retry-after': '10' });
      return true;
    }
    return limited(req, res, url);
  };
  expect(await deliver(request(FIVE))).toMatchObject({ status: 'delivered' });
  expect(host.reviews).toHaveLength(0);
  // One wait of 10 s fits the 15 s budget; the next would not.
  expect(clock).toBe(10_000);
  expect(summary()).toContain('line 10: Problem on line 10. _(GitHub did not take the inline review (http_422))_');
  expect(summary().match(/rate_limited: asked to wait 10 s, longer than a delivery waits in place/g)).toHaveLength(4);
  expect(reviewPosts().length).toBeLessThanOrEqual(6);
});

test('GitLab: a push between the merge request read and the diffs read: positions name the head whose diff was checked', async () => {
  const mrFixture = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, any>;
  const mr = { ...mrFixture, object_attributes: { ...mrFixture.object_attributes, last_commit: { ...mrFixture.object_attributes.last_commit, id: HEAD_A } } };
  const base = '1'.repeat(40);
  let gitlabHead = HEAD_A;
  host.extra = (req, res, url) => {
    if (req.method === 'GET' && url.pathname === '/api/v4/projects/1/merge_requests/1') {
      sendJson(res, 200, { iid: 1, sha: gitlabHead, diff_refs: { base_sha: base, start_sha: base, head_sha: gitlabHead } });
      gitlabHead = HEAD_B;
      return true;
    }
    if (req.method === 'GET' && url.pathname === '/api/v4/projects/1/merge_requests/1/diffs') {
      sendJson(res, 200, [{ old_path: 'src/f.ts', new_path: 'src/f.ts', diff: `${patchAt[gitlabHead]}\n`, new_file: false, renamed_file: false, deleted_file: false }]);
      return true;
    }
    return false;
  };
  host.mrDiffs = [{ old_path: 'src/f.ts', new_path: 'src/f.ts', diff: `${PATCH_B}\n`, new_file: false, renamed_file: false, deleted_file: false }];
  expect(await deliver(request([finding(40, 'eval of user input.')], 'gitlab', mr))).toMatchObject({ status: 'delivered' });
  expect(host.discussions.map((d) => d.notes[0]!.position)).toEqual([expect.objectContaining({ head_sha: HEAD_B, new_line: 40 })]);
});
