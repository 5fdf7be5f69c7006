/**
 * A GitLab merge request read before GitLab prepared it: GitLab prepares a new merge
 * request's diff, `diff_refs` and `changes_count` asynchronously, after the `open` webhook
 * may have been sent (gitlab-org/gitlab#386562: `diff_refs` null for 1–5 s; `prepared_at`
 * says when it is done, gitlab-org/gitlab!122001; `merge_status: preparing` meanwhile), and
 * `/diffs` answers `[]` until then. The diff tools wait a few seconds for it, then fail
 * retryably: an empty list then is no empty diff. A merge request that really changes
 * nothing is still answered at once.
 */
import { BUILTIN_TOOLS, type ToolContext } from '../../functions/core/agent/tools';
import type { QueueMessage } from '../../functions/core/types';
import { SAMPLE_PATCH, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';
import { mrAt } from '../support/review-request';

const HEAD = 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7';
const MR = '/api/v4/projects/1/merge_requests/1';
const REFS = { base_sha: 'b'.repeat(40), start_sha: 'b'.repeat(40), head_sha: HEAD };
/** As GitLab answers GET /merge_requests/:iid before and after it prepared the merge request. */
const UNPREPARED = { iid: 1, sha: HEAD, state: 'opened', prepared_at: null, changes_count: null, merge_status: 'preparing', detailed_merge_status: 'preparing', diff_refs: null };
const PREPARED = { iid: 1, sha: HEAD, state: 'opened', prepared_at: '2026-11-25T10:00:04Z', changes_count: '1', merge_status: 'can_be_merged', detailed_merge_status: 'mergeable', diff_refs: REFS };

let host: FakeCodehost;
/** What GET /merge_requests/:iid answers; `/diffs` answers `[]` unless it is PREPARED. */
let mr: Record<string, unknown>;
const waits: number[] = [];
useFakeCodehost((started) => {
  host = started;
}, { samplePatch: true });
beforeEach(() => {
  mr = UNPREPARED;
  waits.length = 0;
  host.extra = (req, res, url) => {
    if (req.method !== 'GET') return false;
    if (url.pathname === MR) return sendJson(res, 200, mr), true;
    if (url.pathname === `${MR}/diffs` && mr !== PREPARED) return sendJson(res, 200, []), true;
    return false;
  };
});

const message: QueueMessage = { v: 1, event_id: 'evt_p', subscription: 'review', source: 'gitlab', event: 'merge_request', delivery_id: 'd', received_at: '' };
/** `onWait` runs at each wait (GitLab finishing its preparation then). */
const context = (onWait: () => void = () => {}): ToolContext => ({
  message, payload: mrAt(HEAD), delivery: codehostDelivery(host, 1000), signal: AbortSignal.timeout(5000),
  sleep: async (ms) => {
    waits.push(ms);
    onWait();
  },
});

test('get_change_diff and list_changed_files on a merge request GitLab has not prepared wait a few seconds, then fail retryably instead of answering an empty diff', async () => {
  for (const tool of ['get_change_diff', 'list_changed_files']) {
    waits.length = 0;
    await expect(BUILTIN_TOOLS[tool]!.run({}, context())).rejects.toMatchObject({
      code: 'tool_unprepared', retryable: true, message: expect.stringContaining("GitLab has not prepared this merge request's diff yet"),
    });
    // Bounded: a few seconds in all, not the tool's rate-limit budget.
    expect(waits.length).toBeGreaterThan(0);
    expect(waits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10_000);
  }
});

test('each sign GitLab gives of an unprepared merge request is heeded: diff_refs, prepared_at, merge_status, changes_count', async () => {
  const signs: Array<Record<string, unknown>> = [
    { ...PREPARED, diff_refs: null },
    { ...PREPARED, prepared_at: null },
    { ...PREPARED, merge_status: 'preparing', detailed_merge_status: 'preparing' },
    { ...PREPARED, changes_count: '3' },
  ];
  for (const sign of signs) {
    mr = sign;
    await expect(BUILTIN_TOOLS.get_change_diff!.run({}, context())).rejects.toMatchObject({ code: 'tool_unprepared', retryable: true });
  }
});

test('when GitLab finishes preparing during the wait, the real diff is answered', async () => {
  const out = await BUILTIN_TOOLS.get_change_diff!.run({}, context(() => {
    mr = PREPARED;
  }));
  expect(out).toContain('--- src/f.ts');
  expect(out).toContain(SAMPLE_PATCH.split('\n')[3]);
  expect(waits).toHaveLength(1);
});

test('a prepared merge request that changes nothing is answered at once, as an empty list', async () => {
  mr = { ...PREPARED, changes_count: '0' };
  host.mrDiffs = [];
  host.extra = (req, res, url) => (req.method === 'GET' && url.pathname === MR ? (sendJson(res, 200, mr), true) : false);
  expect(await BUILTIN_TOOLS.list_changed_files!.run({}, context())).toBe('');
  expect(waits).toHaveLength(0);
});
