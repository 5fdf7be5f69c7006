/**
 * A review run whose every get_change_diff call failed (the code host answered 500) and
 * whose model then answered "LGTM" must not read as a review: the sticky comment says the
 * diff could not be read, and its footer does not name the head commit as reviewed (an
 * incremental review would otherwise start after a commit nobody reviewed). The last real
 * review's commit stays in the footer.
 */
import type { AgentRequest } from '../../functions/core/agent/agent';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { BUILTIN_TOOLS } from '../../functions/core/agent/tools';
import type { Config } from '../../functions/core/config/types';
import { reviewedCommitOf, reviewedMarker, stickyMarker } from '../../functions/core/events/loop-guard';
import { flattenFindings } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { QueueMessage } from '../../functions/core/types';
import { botComment, startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const HEAD = 'cccccccccccccccccccccccccccccccccccccccc';
const OLD = 'dddddddddddddddddddddddddddddddddddddddd';
let host: FakeCodehost;
let llm: LocalServer;
let script: unknown[] = [];
beforeAll(async () => {
  host = await startFakeCodehost();
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift()));
});
afterAll(async () => {
  await host.close();
  await llm.close();
});
beforeEach(() => {
  host.comments.clear();
  host.files = [{ filename: 'src/f.ts', status: 'modified', additions: 1, deletions: 0, patch: '@@ -1 +1,2 @@\n a\n+b' }];
  delete host.extra;
});

const settings = (): Config['delivery'] => ({ timeout_ms: 1000, codehost: { github: { token: 'gh-T', api_url: host.url } } });
const payload = { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD } } };
const message = (id: string): QueueMessage => ({ v: 1, event_id: id, subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' });
const call = (args: Record<string, unknown>) => ({ choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_change_diff', arguments: JSON.stringify(args) } }] } }] });
const answer = (content: string) => ({ choices: [{ finish_reason: 'stop', message: { role: 'assistant', content } }] });

async function reviewAndDeliver(id: string, diffBroken: boolean): Promise<{ reply: string; body: string }> {
  // The code host fails every diff read (whole diff and per-file list) when broken.
  host.extra = (_req, res, url) => (diffBroken && /\/pulls\/7(\/files)?$/.test(url.pathname) ? (sendJson(res, 500, { message: 'Server Error' }), true) : false);
  script = [call({}), answer('LGTM, nothing found.')];
  const request: AgentRequest = { system: 'S', prompt: 'Review', rendered: 'Review', allowedTools: ['get_change_diff'], timeoutMs: 20_000, maxSteps: 4, message: message(id), payload };
  const reply = (await runToolLoop(request, { provider: openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm' }), tools: BUILTIN_TOOLS, delivery: settings() })).text;
  delete host.extra;
  const delivery: DeliveryRequest = {
    subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message: message(id), payload, reply, settings: settings(), logger: jsonLogger(() => {}),
  };
  const outcome = await createDeliveryTargets(settings(), async () => {}).codehost_comment.deliver(delivery);
  expect(outcome).toMatchObject({ status: 'delivered' });
  return { reply, body: host.comments.get('/repos/octo/widgets/issues/7')![0]!.body };
}

test('every diff read failed: the comment says so and names no reviewed commit', async () => {
  const { reply, body } = await reviewAndDeliver('evt_u1', true);
  expect(body).toContain('LGTM, nothing found.');
  expect(body).toMatch(/could not read this change's diff \(get_change_diff failed: .*500/);
  expect(reviewedCommitOf(body)).toBeUndefined();
  expect(body).not.toContain('reviewed `');
  // Chat targets get the same note.
  expect(flattenFindings(reply)).toContain("could not read this change's diff");
});

test('after an earlier real review, a failed one keeps that review\'s commit in the footer', async () => {
  host.comments.set('/repos/octo/widgets/issues/7', [botComment(1, `Earlier review.\n\n---\n${reviewedMarker(OLD)}\n${stickyMarker('review')}`)]);
  const { body } = await reviewAndDeliver('evt_u2', true);
  expect(reviewedCommitOf(body)).toBe(OLD);
  expect(body).toContain("could not read this change's diff");
});

test('a run that read the diff names the head as reviewed, with no note', async () => {
  const { body } = await reviewAndDeliver('evt_u3', false);
  expect(reviewedCommitOf(body)).toBe(HEAD);
  expect(body).not.toContain("could not read this change's diff");
});
