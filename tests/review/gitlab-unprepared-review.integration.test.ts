/**
 * A review of a just-opened GitLab merge request, run and delivered while GitLab is still
 * preparing it (gitlab-org/gitlab#386562: `diff_refs` null and `/diffs` empty for a few
 * seconds after the `open` webhook; `prepared_at` null, `merge_status: preparing`).
 * - The run's diff read fails (retryably) instead of reading an empty diff, so the run is
 *   no review: the sticky footer does not name the head, the comment says the diff was
 *   not read.
 * - A delivery with findings waits a few seconds in place for GitLab; when it is still not
 *   prepared, the delivery fails retryably (the queue tries it again) instead of folding
 *   every finding for good.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { BUILTIN_TOOLS, type Tool, type ToolContext } from '../../functions/core/agent/tools';
import { reviewedCommitOf } from '../../functions/core/events/loop-guard';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { QueueMessage } from '../../functions/core/types';
import { fanOut } from '../../functions/core/worker/fan-out';
import { SAMPLE_PATCH, codehostDelivery, startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { deliverComment, mrAt, reviewRequest } from '../support/review-request';

const HEAD = 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7';
const MR = '/api/v4/projects/1/merge_requests/1';
const FINDING: Finding = { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero.' };
let host: FakeCodehost;
let llm: LocalServer;
let script: unknown[] = [];
let prepared = false;
beforeAll(async () => {
  host = await startFakeCodehost();
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift()));
});
afterAll(async () => {
  await host.close();
  await llm.close();
});
beforeEach(() => {
  host.reset();
  prepared = false;
  host.mrDiffs = [{ old_path: 'src/f.ts', new_path: 'src/f.ts', diff: `${SAMPLE_PATCH}\n`, new_file: false, renamed_file: false, deleted_file: false }];
  host.extra = (req, res, url) => {
    if (req.method !== 'GET') return false;
    // As GitLab answers until the merge request is prepared: no diff_refs, no changes, no prepared_at.
    if (url.pathname === MR) {
      return sendJson(res, 200, prepared
        ? { iid: 1, sha: HEAD, state: 'opened', prepared_at: '2026-11-25T10:00:04Z', changes_count: '1', merge_status: 'can_be_merged', detailed_merge_status: 'mergeable', diff_refs: { base_sha: 'b'.repeat(40), start_sha: 'b'.repeat(40), head_sha: HEAD } }
        : { iid: 1, sha: HEAD, state: 'opened', prepared_at: null, changes_count: null, merge_status: 'preparing', detailed_merge_status: 'preparing', diff_refs: null }), true;
    }
    if (url.pathname === `${MR}/diffs` && !prepared) return sendJson(res, 200, [], { 'x-page': '1', 'x-total': '0', 'x-total-pages': '1' }), true;
    return false;
  };
});

const settings = () => codehostDelivery(host, 1000);
const message = (id: string): QueueMessage => ({ v: 1, event_id: id, subscription: 'review', source: 'gitlab', event: 'merge_request', delivery_id: 'd', received_at: '' });
const call = (name: string) => ({ choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name, arguments: '{}' } }] } }] });
const answer = (content: string) => ({ choices: [{ finish_reason: 'stop', message: { role: 'assistant', content } }] });
/** The built-in tools with their waits recorded instead of slept (ToolContext.sleep). */
const waits: number[] = [];
const tools: Record<string, Tool> = Object.fromEntries(Object.entries(BUILTIN_TOOLS).map(([name, tool]) => [name, { ...tool, run: (input: unknown, context: ToolContext) => tool.run(input, { ...context, sleep: async (ms) => void waits.push(ms) }) }]));

test('a review run on an unprepared merge request is not recorded as a review of its head', async () => {
  script = [call('get_change_diff'), answer('LGTM: this merge request changes nothing.')];
  const request: AgentRequest = { system: 'S', prompt: 'Review', rendered: 'Review', allowedTools: ['get_change_diff'], timeoutMs: 20_000, maxSteps: 4, message: message('evt_p1'), payload: mrAt(HEAD) };
  const reply = (await runToolLoop(request, { provider: openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm' }), tools, delivery: settings() })).text;
  expect(waits.length).toBeGreaterThan(0);
  // A few seconds later, when the reply is delivered, GitLab has prepared the merge request.
  prepared = true;
  expect(await deliverComment(settings(), reviewRequest(settings(), reply, 'evt_p1', HEAD, 'gitlab'))).toMatchObject({ status: 'delivered' });
  const body = host.comments.get(MR)![0]!.body;
  // The footer must not say the head was reviewed: the next push's since_last_review would skip every line of it.
  expect(reviewedCommitOf(body)).toBeUndefined();
  expect(body).toMatch(/could not read this change's diff \(get_change_diff failed: GitLab has not prepared this merge request's diff yet/);
});

test('a delivery with findings while GitLab still prepares the merge request fails retryably, posting nothing; the retry places them', async () => {
  const reply = withFindings('Review.', [FINDING]);
  const deliverWith = (sleep: (ms: number) => Promise<void>) => fanOut({
    subscription: { name: 'review', events: [], skills: [], deliver: ['codehost_comment'], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message: message('evt_p2'), payload: mrAt(HEAD), reply, previous: undefined,
    targets: createDeliveryTargets(settings(), sleep), settings: settings(), logger: jsonLogger(() => {}), now: () => '2026-11-25T10:00:00Z', secrets: [],
  });
  const slept: number[] = [];
  const first = await deliverWith(async (ms) => void slept.push(ms));
  expect(first.failures).toEqual([expect.objectContaining({ kind: 'codehost_comment', retryable: true, message: expect.stringContaining("GitLab has not prepared merge request !1's diff yet") })]);
  // Waited in place first, a few seconds at most.
  expect(slept.length).toBeGreaterThan(0);
  expect(slept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10_000);
  // Nothing posted: no summary folding the finding as "outside the diff" or "diff_refs could not be read".
  expect(host.comments.get(MR)).toBeUndefined();
  expect(host.discussions).toHaveLength(0);

  prepared = true;
  const retry = await deliverWith(async () => {});
  expect(retry.failures).toEqual([]);
  expect(host.discussions).toHaveLength(1);
  expect(host.discussions[0]!.notes[0]!.position).toMatchObject({ head_sha: HEAD, new_line: 12 });
  expect(host.comments.get(MR)![0]!.body).toContain('1 finding(s) are posted as inline comments on the diff.');
});

test('GitLab finishing its preparation during the in-place wait: the findings go inline in the same delivery', async () => {
  const reply = withFindings('Review.', [FINDING]);
  const outcome = await createDeliveryTargets(settings(), async () => {
    prepared = true;
  }).codehost_comment.deliver(reviewRequest(settings(), reply, 'evt_p3', HEAD, 'gitlab'));
  expect(outcome).toMatchObject({ status: 'delivered' });
  expect(host.discussions).toHaveLength(1);
  expect(host.comments.get(MR)![0]!.body).not.toContain('outside the diff');
});
