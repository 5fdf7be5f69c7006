/**
 * `since_last_review` on a long thread finds the sticky comment as the delivery does
 * (marker-search.ts: newest first, then oldest first). Before, it read GitHub's 3,000 oldest
 * comments and GitLab's 3,000 newest notes by `created_at`: a sticky comment made after
 * 3,000 others (GitHub), or followed by 3,000 newer notes (GitLab), was not found, and the
 * "incremental" review read the whole change again.
 */
import { BUILTIN_TOOLS, type ToolContext } from '../../functions/core/agent/tools';
import { reviewedMarker, stickyMarker } from '../../functions/core/events/loop-guard';
import type { Source } from '../../functions/core/types';
import { botComment, codehostDelivery, startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';

const HEAD = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const OLD = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const STICKY = `old review\n${reviewedMarker(OLD)}\n${stickyMarker('review')}`;
let host: FakeCodehost;
beforeAll(async () => {
  host = await startFakeCodehost();
});
afterAll(async () => host.close());
afterEach(() => {
  host.extra = undefined;
});

const context = (source: Source, event: string, payload: Record<string, unknown>): ToolContext => ({
  message: { v: 1, event_id: 'evt_1', subscription: 'review', source, event, delivery_id: 'd', received_at: '' },
  payload, delivery: codehostDelivery(host, 2000), signal: AbortSignal.timeout(20_000),
});
/** Comments by someone else: on GitHub a `user`, on GitLab an `author`. */
const others = (count: number, from: number, source: Source) => Array.from({ length: count }, (_, i) => ({
  id: from + i, body: `comment ${i}`, ...(source === 'github' ? { user: { id: 7, login: 'dev', type: 'User' } } : { author: { id: 7 } }),
}));

test('GitHub: a sticky comment made after 3,100 others is found (the list is read from its last page back)', async () => {
  host.comments.set('/repos/octo/widgets/issues/7', [...others(3100, 100_000, 'github'), botComment(1, STICKY)] as never);
  const files = [{ filename: 'a.ts', status: 'modified', additions: 1, deletions: 0, patch: '@@ -1 +1 @@\n-x\n+only new' }];
  host.extra = (_req, res, url) => (url.pathname === `/repos/octo/widgets/compare/${OLD}...${HEAD}` ? (sendJson(res, 200, { status: 'ahead', total_commits: 1, files }), true) : false);
  const out = await BUILTIN_TOOLS.get_change_diff!.run({ since_last_review: true }, context('github', 'pull_request', { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD } } }));
  expect(out).toContain(`changes since the last review at ${OLD.slice(0, 12)}`);
  expect(out).toContain('+only new');
});

test('GitLab: a sticky note followed by 3,100 newer notes is found (the oldest end is read too)', async () => {
  const project = '/api/v4/projects/1';
  host.comments.set(`${project}/merge_requests/1`, [botComment(1, STICKY, 'gitlab'), ...others(3100, 100_000, 'gitlab')] as never);
  host.extra = (_req, res, url) => {
    if (url.pathname === `${project}/repository/merge_base`) return sendJson(res, 200, { id: OLD }), true;
    if (url.pathname === `${project}/repository/compare`) return sendJson(res, 200, { diffs: [{ old_path: 'n.rb', new_path: 'n.rb', diff: '+only new', new_file: false, renamed_file: false, deleted_file: false }] }), true;
    return false;
  };
  const payload = { object_kind: 'merge_request', project: { id: 1 }, object_attributes: { iid: 1, action: 'update', last_commit: { id: HEAD } } };
  const out = await BUILTIN_TOOLS.get_change_diff!.run({ since_last_review: true }, context('gitlab', 'merge_request', payload));
  expect(out).toContain(`changes since the last review at ${OLD.slice(0, 12)}`);
  expect(out).toContain('+only new');
});
