/**
 * Rate limits and lost answers on inline findings (hunt 8 D2). GitHub's secondary limit on
 * the review (403 + Retry-After) and GitLab's 429 on a discussion are waited out as the
 * host asks (through the delivery's sleep), then the write is looked for and sent again;
 * a wait longer than the in-place maximum folds the findings with that reason. A GitLab
 * discussion answered 5xx is looked for (its marker) before it is sent again.
 * The fake host keeps a virtual clock: the sum of the delivery's sleeps.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../functions/core/config/types';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { QueueMessage, Source } from '../../functions/core/types';
import { SAMPLE_PATCH as PATCH, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';

const HEAD = 'cccccccccccccccccccccccccccccccccccccccc';
let host: FakeCodehost;
let clock = 0;
const sleeps: number[] = [];
const sleep = async (ms: number) => {
  sleeps.push(ms);
  clock += ms;
};
useFakeCodehost((started) => {
  host = started;
});
beforeEach(() => {
  clock = 0;
  sleeps.length = 0;
  host.files = [{ filename: 'src/f.ts', status: 'modified', additions: 2, deletions: 1, patch: PATCH }];
  host.mrDiffs = [{ old_path: 'src/f.ts', new_path: 'src/f.ts', diff: `${PATCH}\n`, new_file: false, renamed_file: false, deleted_file: false }];
});

const settings = (): Config['delivery'] => codehostDelivery(host, 1000);
const pr = { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD } } };
const mr = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, unknown>;
const message = (eventId: string, source: Source, event: string): QueueMessage => ({ v: 1, event_id: eventId, subscription: 'review', source, event, delivery_id: 'd', received_at: '' });
const request = (reply: string, eventId: string, source: Source, payload: Record<string, unknown>, event: string): DeliveryRequest => ({
  subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
  message: message(eventId, source, event), payload, reply, settings: settings(), logger: jsonLogger(() => {}),
});
const deliver = (r: DeliveryRequest) => createDeliveryTargets(settings(), sleep).codehost_comment.deliver(r);
const FINDING: Finding = { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero.' };

test('GitHub: a secondary rate limit (403, Retry-After: 2) on the review is waited out, not retried at once and folded', async () => {
  const limitedUntil = 2000;
  let refusedPosts = 0;
  host.extra = (req, res) => {
    if (req.method === 'POST' && req.url.endsWith('/reviews') && clock < limitedUntil) {
      refusedPosts++;
      sendJson(res, 403, { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits' }, { 'retry-after': '2' });
      return true;
    }
    return false;
  };
  const outcome = await deliver(request(withFindings('Verdict.', [FINDING]), 'evt_rl1', 'github', pr, 'pull_request'));
  expect(outcome).toMatchObject({ status: 'delivered' });
  const summary = host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
  // GitHub: "If you receive a rate limit error, you should not try your request again until after the retry-after time".
  expect({ refusedPosts, waitsOf2s: sleeps.filter((ms) => ms >= 2000).length > 0, summaryFolds: summary.includes('did not take the inline review') }).toEqual({ refusedPosts: 1, waitsOf2s: true, summaryFolds: false });
  expect(host.reviews).toHaveLength(1);
});

test('GitLab: a 429 (Retry-After: 2) on a discussion is waited out, not folded at once', async () => {
  host.extra = (req, res) => {
    if (req.method === 'POST' && req.url.endsWith('/discussions') && clock < 2000) {
      sendJson(res, 429, { message: '429 Too Many Requests' }, { 'retry-after': '2' });
      return true;
    }
    return false;
  };
  const outcome = await deliver(request(withFindings('Verdict.', [FINDING]), 'evt_rl2', 'gitlab', mr, 'merge_request'));
  expect(outcome).toMatchObject({ status: 'delivered' });
  const note = [...host.comments.entries()].find(([k]) => k.startsWith('/api/v4/'))![1][0]!.body;
  expect(note).not.toContain('GitLab did not take the position');
  expect(host.discussions).toHaveLength(1);
});

test('GitLab: a discussion GitLab created but answered 502 is found by its marker: not posted again, not reported as refused', async () => {
  let lost = true;
  host.extra = (req, res) => {
    if (!(lost && req.method === 'POST' && req.url.endsWith('/discussions'))) return false;
    lost = false;
    const posted = JSON.parse(req.body) as { body: string; position: Record<string, unknown> };
    host.discussions.push({ id: 'd1', notes: [{ body: posted.body, position: posted.position, author: { id: 4242, username: 'hookagent-bot' } } as never] });
    sendJson(res, 502, { message: 'Bad Gateway' });
    return true;
  };
  const outcome = await deliver(request(withFindings('Verdict.', [FINDING]), 'evt_rl3', 'gitlab', mr, 'merge_request'));
  expect(outcome).toMatchObject({ status: 'delivered' });
  const note = [...host.comments.entries()].find(([k]) => k.startsWith('/api/v4/'))![1][0]!.body;
  expect(host.discussions).toHaveLength(1);
  // The finding IS on the diff; the summary must not list it as refused by GitLab.
  expect(note).not.toContain('GitLab did not take the position (http_502)');
});

test('GitLab: a 502 before the discussion was made is sent again after the look, and posted once', async () => {
  let failed = false;
  host.extra = (req, res) => {
    if (failed || !(req.method === 'POST' && req.url.endsWith('/discussions'))) return false;
    failed = true;
    sendJson(res, 502, { message: 'Bad Gateway' });
    return true;
  };
  expect(await deliver(request(withFindings('Verdict.', [FINDING]), 'evt_rl4', 'gitlab', mr, 'merge_request'))).toMatchObject({ status: 'delivered' });
  expect(host.discussions).toHaveLength(1);
  const posts = host.server.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/discussions'));
  expect(posts).toHaveLength(2);
  const note = [...host.comments.entries()].find(([k]) => k.startsWith('/api/v4/'))![1][0]!.body;
  expect(note).toContain('1 finding(s) are posted as inline comments');
});

describe('a wait longer than the in-place maximum (15 s)', () => {
  const OTHER: Finding = { path: 'src/f.ts', line: 11, side: 'RIGHT', severity: 'minor', body: 'Why 3?' };

  test('GitHub: the review is sent once, not waited for, and its findings are folded with the reason', async () => {
    host.extra = (req, res) => {
      if (!(req.method === 'POST' && req.url.endsWith('/reviews'))) return false;
      sendJson(res, 403, { message: 'You have exceeded a secondary rate limit.' }, { 'retry-after': '60' });
      return true;
    };
    expect(await deliver(request(withFindings('Verdict.', [FINDING]), 'evt_rl5', 'github', pr, 'pull_request'))).toMatchObject({ status: 'delivered' });
    expect(host.server.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/reviews'))).toHaveLength(1);
    expect(sleeps.filter((ms) => ms >= 60_000)).toEqual([]);
    const summary = host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
    expect(summary).toContain('Division by zero. _(GitHub did not take the inline review (rate_limited: asked to wait 60 s, longer than a delivery waits in place))_');
  });

  test('GitLab: the first discussion meets the limit; the rest are folded with it, not sent into it one by one', async () => {
    host.extra = (req, res) => {
      if (!(req.method === 'POST' && req.url.endsWith('/discussions'))) return false;
      sendJson(res, 429, { message: '429 Too Many Requests' }, { 'retry-after': '60' });
      return true;
    };
    expect(await deliver(request(withFindings('Verdict.', [FINDING, OTHER]), 'evt_rl6', 'gitlab', mr, 'merge_request'))).toMatchObject({ status: 'delivered' });
    expect(host.server.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/discussions'))).toHaveLength(1);
    const note = [...host.comments.entries()].find(([k]) => k.startsWith('/api/v4/'))![1][0]!.body;
    expect(note).toContain('Division by zero. _(GitLab did not take the position (rate_limited: asked to wait 60 s, longer than a delivery waits in place))_');
    expect(note).toContain('Why 3? _(GitLab did not take the position (rate_limited: asked to wait 60 s, longer than a delivery waits in place))_');
  });
});
