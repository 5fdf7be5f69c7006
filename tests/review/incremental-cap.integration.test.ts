/**
 * Incremental review (`get_change_diff {"since_last_review": true}`) on a large push:
 * GitHub's compare API lists at most 300 files of a comparison, and GitLab's
 * `/repository/compare` sets `overflow: true` when it left diffs out. The tool must say
 * that the list may be incomplete, instead of presenting it as everything that changed.
 */
import { BUILTIN_TOOLS, type ToolContext } from '../../functions/core/agent/tools';
import type { Config } from '../../functions/core/config/types';
import { reviewedMarker, stickyMarker } from '../../functions/core/events/loop-guard';
import type { Source } from '../../functions/core/types';
import { botComment, codehostDelivery, startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';

const HEAD = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const OLD = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
let host: FakeCodehost;
beforeAll(async () => {
  host = await startFakeCodehost();
});
afterAll(async () => host.close());

const delivery = (): Config['delivery'] => codehostDelivery(host, 500);
const context = (source: Source, event: string, payload: Record<string, unknown>): ToolContext => ({
  message: { v: 1, event_id: 'evt_1', subscription: 'review', source, event, delivery_id: 'd', received_at: '' },
  payload, delivery: delivery(), signal: AbortSignal.timeout(5000),
});

test('GitHub: a comparison listing 300 files says the list may be cut', async () => {
  host.comments.set('/repos/octo/widgets/issues/7', [botComment(1, `old review\n${reviewedMarker(OLD)}\n${stickyMarker('review')}`)]);
  const files = Array.from({ length: 300 }, (_, i) => ({ filename: `f${i}.ts`, status: 'modified', additions: 1, deletions: 0, patch: '+x' }));
  host.extra = (_req, res, url) => (url.pathname === `/repos/octo/widgets/compare/${OLD}...${HEAD}` ? (sendJson(res, 200, { status: 'ahead', total_commits: 3, files }), true) : false);
  const out = await BUILTIN_TOOLS.get_change_diff!.run({ since_last_review: true }, context('github', 'pull_request', { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD } } }));
  expect(out).toContain(`changes since the last review at ${OLD.slice(0, 12)}`);
  expect(out).toMatch(/300 files/);
  expect(out).toMatch(/list_changed_files/);
});

test('GitLab: a compare with overflow says diffs were left out', async () => {
  const project = '/api/v4/projects/1';
  host.comments.set(`${project}/merge_requests/1`, [botComment(1, `old review\n${reviewedMarker(OLD)}\n${stickyMarker('review')}`, 'gitlab')]);
  host.extra = (_req, res, url) => {
    if (url.pathname === `${project}/repository/merge_base`) return sendJson(res, 200, { id: OLD }), true;
    if (url.pathname === `${project}/repository/compare`) return sendJson(res, 200, { overflow: true, diffs: [{ old_path: 'n.rb', new_path: 'n.rb', diff: '+only new', new_file: false, renamed_file: false, deleted_file: false }] }), true;
    return false;
  };
  const payload = { object_kind: 'merge_request', project: { id: 1 }, object_attributes: { iid: 1, action: 'update', last_commit: { id: HEAD } } };
  const out = await BUILTIN_TOOLS.get_change_diff!.run({ since_last_review: true }, context('gitlab', 'merge_request', payload));
  expect(out).toContain('+only new');
  expect(out).toMatch(/left out|overflow/);
});
