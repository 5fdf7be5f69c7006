/**
 * The GitHub inline review is posted against the head whose diff its lines were checked
 * against (hunt 8 D4). The lines are checked against the pull request's diff as it is when
 * the delivery runs (GET /pulls/{n}/files), which is also what the agent's tools read. After
 * a push during the run (the event names A, the pull request is at B), a review posted with
 * `commit_id` A would have GitHub read each line in A's diff: a 422 (every finding folded),
 * or a comment on other code. The fake here applies GitHub's rule to `commit_id`.
 */
import { BUILTIN_TOOLS } from '../../functions/core/agent/tools';
import type { Config } from '../../functions/core/config/types';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { QueueMessage } from '../../functions/core/types';
import { FAKE_BOT, SAMPLE_PATCH, SAMPLE_PATCH_PUSHED, codehostDelivery, rightLines, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';

const HEAD_A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const HEAD_B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
// A's diff: old 10..13 / new 10..14 (SAMPLE_PATCH). B adds a second hunk at new 40..42.
const PATCH_B = SAMPLE_PATCH_PUSHED;
const filesAt: Record<string, string> = { [HEAD_A]: SAMPLE_PATCH, [HEAD_B]: PATCH_B };


let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
});
beforeEach(() => {
  // The pull request is at B by now (a push during the run of A's event).
  host.pullHead = HEAD_B;
  host.files = [{ filename: 'src/f.ts', status: 'modified', additions: 4, deletions: 1, patch: PATCH_B }];
  host.extra = (req, res) => {
    if (!(req.method === 'POST' && req.url.endsWith('/reviews'))) return false;
    const review = JSON.parse(req.body) as { commit_id?: string; comments: Array<{ path: string; line: number; side: string; body: string }> };
    const diff = filesAt[review.commit_id ?? HEAD_B]!;
    if (review.comments.some((c) => !rightLines(diff).has(c.line))) {
      sendJson(res, 422, { message: 'Unprocessable Entity', errors: ['Pull request review thread line must be part of the diff'], status: '422' });
      return true;
    }
    host.reviews.push(review);
    host.reviewComments.push(...review.comments.map((c) => ({ ...c, user: { ...FAKE_BOT, type: 'User' } })));
    sendJson(res, 200, { id: 1, state: 'COMMENTED', commit_id: review.commit_id });
    return true;
  };
});

const settings = (): Config['delivery'] => codehostDelivery(host, 1000);
const payload = { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD_A } } };
const reviewPosts = () => host.server.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/reviews')).map((r) => JSON.parse(r.body) as { commit_id?: string });
const message: QueueMessage = { v: 1, event_id: 'evt_a', subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' };

test('a finding on a line the run read (the live diff) is placed, not refused against the older commit_id', async () => {
  // What the agent of A's event reads: the live diff, B's second hunk included.
  const read = await BUILTIN_TOOLS.get_change_diff!.run({}, { message, payload, delivery: settings(), signal: AbortSignal.timeout(5000) });
  expect(read).toContain('+  x = eval(input);');
  const finding: Finding = { path: 'src/f.ts', line: 40, side: 'RIGHT', severity: 'critical', body: 'eval of user input.' };
  const request: DeliveryRequest = {
    subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message, payload, reply: withFindings('Verdict.', [finding]), settings: settings(), logger: jsonLogger(() => {}),
  };
  expect(await createDeliveryTargets(settings(), async () => {}).codehost_comment.deliver(request)).toMatchObject({ status: 'delivered' });
  const summary = host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
  // Either post the review at the commit whose diff the lines were checked against (B), or check them
  // against the diff of the commit it names: never lines of one diff under another commit's id.
  expect({ commitIds: reviewPosts().map((r) => r.commit_id), refusedByGitHub: summary.includes('did not take the inline review (http_422)') }).toEqual({ commitIds: [HEAD_B], refusedByGitHub: false });
  expect(summary).toContain('1 finding(s) are posted as inline comments');
});

test('when the head cannot be read, the review names no commit_id: GitHub takes the latest, whose diff was checked', async () => {
  delete host.pullHead;
  const finding: Finding = { path: 'src/f.ts', line: 40, side: 'RIGHT', severity: 'critical', body: 'eval of user input.' };
  const request: DeliveryRequest = {
    subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message, payload, reply: withFindings('Verdict.', [finding]), settings: settings(), logger: jsonLogger(() => {}),
  };
  expect(await createDeliveryTargets(settings(), async () => {}).codehost_comment.deliver(request)).toMatchObject({ status: 'delivered' });
  expect(reviewPosts()).toHaveLength(1);
  expect(reviewPosts()[0]).not.toHaveProperty('commit_id');
  expect(host.reviews).toHaveLength(1);
});
