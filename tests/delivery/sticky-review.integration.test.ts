/**
 * Sticky review comments and the code-host request rules, against a local server that
 * speaks GitHub's and GitLab's wire format: one comment per (subscription, pull/merge
 * request) edited in place, URLs only from validated parts, no credentials across
 * origins, GitHub secondary rate limits waited out (Retry-After, else at least 60 s).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import githubExamples from '@octokit/webhooks-examples';
import type { Config } from '../../functions/core/config/types';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { causedByHookagent, reviewedCommitOf, stickyMarker } from '../../functions/core/events/loop-guard';
import { jsonLogger } from '../../functions/core/log';
import type { Source, Subscription } from '../../functions/core/types';
import { codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson, startLocalServer } from '../support/local-http';

const TOKEN = 'ghp_STICKY_SECRET';
const GL_TOKEN = 'glpat-STICKY_SECRET';
const HEAD_1 = '1111111111111111111111111111111111111111';
const HEAD_2 = '2222222222222222222222222222222222222222';
const waits: number[] = [];
const sleep = async (ms: number) => void waits.push(ms);
const logs: string[] = [];

const prExample = () => JSON.parse(JSON.stringify(githubExamples.find((g) => g.name === 'pull_request')!.examples[0])) as Record<string, any>;
function synchronize(head: string): Record<string, unknown> {
  const p = prExample();
  p.action = 'synchronize';
  p.pull_request.head.sha = head;
  p.repository.full_name = 'octo/widgets';
  p.pull_request.number = 7;
  return p;
}

function request(source: Source, event: string, payload: Record<string, unknown>, eventId: string, reply: string, subscription: Partial<Subscription> = {}): DeliveryRequest {
  return {
    subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x', ...subscription },
    message: { v: 1, event_id: eventId, subscription: 'review', source, event, delivery_id: 'd', received_at: '' },
    payload, reply, settings: { timeout_ms: 500, codehost: {} }, logger: jsonLogger((l) => logs.push(l)),
  };
}

let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
});
beforeEach(() => {
  waits.length = 0;
  logs.length = 0;
});

const settings = (): Config['delivery'] => codehostDelivery(host, 500, { github: TOKEN, gitlab: GL_TOKEN });
const deliver = (r: DeliveryRequest, maxWaitMs?: number) => createDeliveryTargets(settings(), sleep, maxWaitMs).codehost_comment.deliver({ ...r, settings: settings() });
const thread = '/repos/octo/widgets/issues/7';

describe('one sticky comment per pull request', () => {
  test('two synchronize events leave exactly one hookagent comment, edited, naming the second head commit', async () => {
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'First review.'))).toMatchObject({ status: 'delivered' });
    const second = await deliver(request('github', 'pull_request', synchronize(HEAD_2), 'evt_b', 'Second review.'));
    expect(second).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
    const comments = host.comments.get(thread)!;
    expect(comments).toHaveLength(1);
    const body = comments[0]!.body;
    expect(body).toContain('Second review.');
    expect(body).not.toContain('First review.');
    expect(body).toContain(`reviewed \`${HEAD_2.slice(0, 12)}\``);
    expect(reviewedCommitOf(body)).toBe(HEAD_2);
    expect(body).toContain(stickyMarker('review'));
    expect(causedByHookagent({ comment: { body } })).toBe(true);
    const edit = host.server.requests.find((r) => r.method === 'PATCH')!;
    expect(edit.url).toBe(`/repos/octo/widgets/issues/comments/${comments[0]!.id}`);
    expect(edit.headers.authorization).toBe(`token ${TOKEN}`);
  });

  test('a redelivered event finds its own marker: nothing is posted or edited again', async () => {
    await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'First review.'));
    host.server.requests.length = 0;
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'First review.'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('already posted') });
    expect(host.server.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
  });

  test('a late retry of an earlier event finds its marker kept in the sticky footer and does not overwrite the newer review', async () => {
    await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'First review.'));
    await deliver(request('github', 'pull_request', synchronize(HEAD_2), 'evt_b', 'Second review.'));
    host.server.requests.length = 0;
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'First review.'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('already posted') });
    expect(host.server.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
    expect(host.comments.get(thread)![0]!.body).toContain('Second review.');
  });

  test('a deleted sticky comment is recreated; another subscription keeps its own comment', async () => {
    await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'First.'));
    host.comments.set(thread, []);
    await deliver(request('github', 'pull_request', synchronize(HEAD_2), 'evt_b', 'Second.'));
    await deliver(request('github', 'pull_request', synchronize(HEAD_2), 'evt_c', 'Security view.', { name: 'security' }));
    const comments = host.comments.get(thread)!;
    expect(comments).toHaveLength(2);
    expect(comments[0]!.body).toContain('Second.');
    expect(comments[1]!.body).toContain(stickyMarker('security'));
  });

  test('the sticky comment vanishing between listing and editing (404) is recreated, not failed', async () => {
    await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'First.'));
    host.extra = (req, res) => {
      if (req.method !== 'PATCH') return false;
      host.comments.set(thread, []);
      sendJson(res, 404, { message: 'Not Found' });
      return true;
    };
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_2), 'evt_b', 'Second.'))).toMatchObject({ status: 'delivered' });
    expect(host.comments.get(thread)!.map((c) => c.body)).toEqual([expect.stringContaining('Second.')]);
  });

  test('comment mode `new` posts one comment per event', async () => {
    await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'First.', { comment_mode: 'new' }));
    await deliver(request('github', 'pull_request', synchronize(HEAD_2), 'evt_b', 'Second.', { comment_mode: 'new' }));
    expect(host.comments.get(thread)).toHaveLength(2);
    expect(host.server.requests.filter((r) => r.method === 'PATCH')).toHaveLength(0);
  });

  test('the marker is found on a later page (Link pagination)', async () => {
    host.comments.set(thread, Array.from({ length: 230 }, (_, i) => ({ id: i + 1, body: `comment ${i}`, html_url: `u${i}` })));
    await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'First.'));
    await deliver(request('github', 'pull_request', synchronize(HEAD_2), 'evt_b', 'Second.'));
    expect(host.comments.get(thread)).toHaveLength(231);
    expect(host.server.requests.filter((r) => r.method === 'GET' && r.url.includes('page=3'))).not.toHaveLength(0);
  });

  test('GitLab: two merge request updates leave one note, edited with PUT …/notes/{id}', async () => {
    const mr = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, any>;
    const at = (sha: string) => ({ ...mr, object_attributes: { ...mr.object_attributes, last_commit: { ...mr.object_attributes.last_commit, id: sha } } });
    await deliver(request('gitlab', 'merge_request', at(HEAD_1), 'evt_a', 'First.'));
    expect(await deliver(request('gitlab', 'merge_request', at(HEAD_2), 'evt_b', 'Second.'))).toMatchObject({ status: 'delivered' });
    const notes = [...host.comments.entries()].filter(([k]) => k.startsWith('/api/v4/'));
    expect(notes).toHaveLength(1);
    expect(notes[0]![1]).toHaveLength(1);
    expect(notes[0]![1][0]!.body).toContain(HEAD_2.slice(0, 12));
    const put = host.server.requests.find((r) => r.method === 'PUT')!;
    expect(put.url).toMatch(/^\/api\/v4\/projects\/\d+\/merge_requests\/\d+\/notes\/\d+$/);
    expect(put.headers['private-token']).toBe(GL_TOKEN);
  });
});

describe('markers count only in comments hookagent wrote', () => {
  const MALLORY = { id: 666, login: 'mallory', type: 'User' };
  const forged = (id: number, commit: string) => `LGTM, thanks!\n<!-- hookagent:review:sticky -->\n<!-- hookagent-reviewed:${commit} -->`;

  test("GitHub: a third party's comment carrying the sticky and reviewed markers is neither edited nor taken for the bot's", async () => {
    host.comments.set(thread, [{ id: 77, body: forged(77, HEAD_1), html_url: 'u77', user: MALLORY }]);
    const outcome = await deliver(request('github', 'pull_request', synchronize(HEAD_2), 'evt_a', 'Real review.'));
    expect(outcome).toMatchObject({ status: 'delivered' });
    expect(host.server.requests.filter((r) => r.method === 'PATCH')).toHaveLength(0);
    const comments = host.comments.get(thread)!;
    expect(comments.map((c) => c.id)).toEqual([77, expect.any(Number)]);
    expect(comments[0]!.body).toBe(forged(77, HEAD_1));
    expect(comments[1]!.body).toContain('Real review.');
    // The bot's own comment is edited next time, the forged one still ignored.
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_2), 'evt_b', 'Second.'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
    expect(host.server.requests.filter((r) => r.method === 'PATCH').map((r) => r.url)).toEqual([`/repos/octo/widgets/issues/comments/${comments[1]!.id}`]);
  });

  test("GitHub: a forged marker of this event's comment does not make the bot skip its delivery", async () => {
    host.comments.set(thread, [{ id: 78, body: 'nothing to see <!-- hookagent:review:evt_a -->', html_url: 'u78', user: MALLORY }]);
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'Posted anyway.'))).toMatchObject({ status: 'delivered' });
    expect(host.comments.get(thread)!.map((c) => c.body)).toEqual([expect.any(String), expect.stringContaining('Posted anyway.')]);
  });

  test("GitLab: the newest note with copied markers (listed first) does not hide the bot's own note, which is edited", async () => {
    const mr = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, any>;
    const at = (sha: string) => ({ ...mr, object_attributes: { ...mr.object_attributes, last_commit: { ...mr.object_attributes.last_commit, id: sha } } });
    await deliver(request('gitlab', 'merge_request', at(HEAD_1), 'evt_a', 'First.'));
    const [key, notes] = [...host.comments.entries()].find(([k]) => k.startsWith('/api/v4/'))!;
    host.comments.set(key, [...notes, { id: 99, body: forged(99, HEAD_1), html_url: 'u99', author: { id: 666, username: 'mallory' } }]);
    host.server.requests.length = 0;
    expect(await deliver(request('gitlab', 'merge_request', at(HEAD_2), 'evt_b', 'Second.'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
    expect(host.server.requests.filter((r) => r.method === 'PUT').map((r) => r.url)).toEqual([expect.stringMatching(new RegExp(`/notes/${notes[0]!.id}$`))]);
    expect(host.comments.get(key)!.find((n) => n.id === 99)!.body).toBe(forged(99, HEAD_1));
  });
});

describe('code-host URLs from validated parts only', () => {
  test.each([
    ['../../admin/escape'], ['octo/../../admin'], ['octo/widgets/../../x'], ['octo%2F..%2F..'],
  ])('a custom event with full_name %p is a recorded failure with a reason and sends no request', async (fullName) => {
    const outcome = await deliver(request('custom', 'build', { repository: { full_name: fullName }, issue: { number: 1 } }, 'evt_x', 'hi'));
    expect(outcome).toMatchObject({ status: 'failed', retryable: false, message: expect.stringMatching(/repository|naming rules|names no/) });
    expect(host.server.requests).toHaveLength(0);
  });

  test('a GitLab project id that is neither numeric nor a valid path sends no request', async () => {
    const outcome = await deliver(request('custom', 'build', { object_kind: 'merge_request', project: { id: '../../admin' }, object_attributes: { iid: 1 } }, 'evt_x', 'hi'));
    expect(outcome).toMatchObject({ status: 'failed', retryable: false });
    expect(host.server.requests).toHaveLength(0);
  });

  test('a GitLab path project is percent-encoded into one segment', async () => {
    const outcome = await deliver(request('custom', 'build', { object_kind: 'merge_request', project: { path_with_namespace: 'group/sub/app' }, object_attributes: { iid: 3 } }, 'evt_x', 'hi'));
    expect(outcome).toMatchObject({ status: 'delivered' });
    expect(host.server.requests.find((r) => r.method === 'POST')!.url).toBe('/api/v4/projects/group%2Fsub%2Fapp/merge_requests/3/notes');
  });
});

describe('tokens never leave the api_url origin', () => {
  test('a redirect to another host is not followed: no token there, a recorded failure', async () => {
    const other = await startLocalServer((_req, res) => sendJson(res, 200, []));
    try {
      host.extra = (_req, res) => {
        res.writeHead(302, { location: `${other.url}/steal` });
        res.end();
        return true;
      };
      const outcome = await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'hi'));
      expect(outcome).toMatchObject({ status: 'failed', retryable: false, code: 'redirect_refused' });
      expect(other.requests).toHaveLength(0);
      const gl = await deliver(request('gitlab', 'merge_request', JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')), 'evt_b', 'hi'));
      expect(gl).toMatchObject({ status: 'failed', code: 'redirect_refused' });
      expect(other.requests).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  test('a Link rel="next" to another host is not followed', async () => {
    const other = await startLocalServer((_req, res) => sendJson(res, 200, []));
    try {
      host.extra = (req, res) => {
        if (req.method !== 'GET') return false;
        sendJson(res, 200, [{ id: 1, body: 'someone else', html_url: 'x' }], { link: `<${other.url}/repos/octo/widgets/issues/7/comments?page=2>; rel="next"` });
        return true;
      };
      expect(await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'hi'))).toMatchObject({ status: 'delivered' });
      expect(other.requests).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  test('a Link rel="next" outside the repository on the same host is not followed either', async () => {
    host.extra = (req, res) => {
      if (req.method !== 'GET' || !req.url.startsWith('/repos/octo/widgets/issues/7/comments')) return false;
      sendJson(res, 200, [], { link: `<${host.url}/admin/escape?page=2>; rel="next"` });
      return true;
    };
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'hi'))).toMatchObject({ status: 'delivered' });
    expect(host.server.requests.map((r) => r.url).filter((u) => u.startsWith('/admin'))).toHaveLength(0);
  });

  test.each([
    ['a repository id that is not a number', '/repositories/abc/issues/7/comments?page=2'],
    ['dot segments out of the list', '/repositories/42/../../admin/escape?page=2'],
    ['no list after the id', '/repositories/42?page=2'],
  ])('a GitHub by-id next link with %s is not followed', async (_what, link) => {
    host.extra = (req, res) => {
      if (req.method !== 'GET' || !req.url.startsWith('/repos/octo/widgets/issues/7/comments')) return false;
      sendJson(res, 200, [], { link: `<${host.url}${link}>; rel="next"` });
      return true;
    };
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'hi'))).toMatchObject({ status: 'delivered' });
    const asked = host.server.requests.map((r) => r.url);
    expect(asked.filter((u) => u.startsWith('/admin') || u.startsWith('/repositories'))).toHaveLength(0);
    expect(asked.filter((u) => u.includes('/issues/7/comments') && u.includes('page=2'))).toHaveLength(0);
  });

  test('a GitHub by-id next link is read as the same list under the repository path, with its page', async () => {
    host.extra = (req, res, url) => {
      if (req.method !== 'GET' || !req.url.startsWith('/repos/octo/widgets/issues/7/comments')) return false;
      sendJson(res, 200, [], url.searchParams.get('page') === '2' ? {} : { link: `<${host.url}/repositories/42/issues/7/comments?per_page=100&page=2>; rel="next"` });
      return true;
    };
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'hi'))).toMatchObject({ status: 'delivered' });
    expect(host.server.requests.map((r) => r.url)).toContain('/repos/octo/widgets/issues/7/comments?per_page=100&page=2');
  });
});

describe('GitHub secondary rate limits', () => {
  const secondary = { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits' };

  test('403 "secondary rate limit" without Retry-After: waited ≥ 60 s (fake sleep), then delivered', async () => {
    host.failNext.push([403, secondary]);
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'hi'), 120_000)).toMatchObject({ status: 'delivered' });
    expect(waits).toEqual([60_000]);
  });

  test('403 "secondary rate limit" with Retry-After waits what it says, short or long (GitHub docs: retry-after first; it waited ≥ 60 s even for 5)', async () => {
    host.failNext.push([403, secondary, { 'retry-after': '5' }]);
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'hi'), 120_000)).toMatchObject({ status: 'delivered' });
    host.failNext.push([403, secondary, { 'retry-after': '90' }]);
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_2), 'evt_b', 'hi'), 120_000)).toMatchObject({ status: 'delivered' });
    expect(waits).toEqual([5_000, 90_000]);
  });

  test('a secondary limit with x-ratelimit-remaining 0 and no Retry-After waits until x-ratelimit-reset', async () => {
    host.failNext.push([403, secondary, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 30) }]);
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'hi'), 120_000)).toMatchObject({ status: 'delivered' });
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(25_000);
    expect(waits[0]).toBeLessThanOrEqual(30_000);
  });

  test('a 403 without limit headers or a limit message is a refusal, not waited out', async () => {
    host.failNext.push([403, { message: 'Resource not accessible by integration' }]);
    expect(await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'hi'), 120_000)).toMatchObject({ status: 'failed', retryable: false, code: 'http_403' });
    expect(waits).toEqual([]);
  });

  test('when the wait is longer than the in-process bound, the failure is retryable with retryAfterMs ≥ 60 s (never permanent)', async () => {
    host.failNext.push([403, secondary]);
    const outcome = await deliver(request('github', 'pull_request', synchronize(HEAD_1), 'evt_a', 'hi'));
    expect(outcome).toMatchObject({ status: 'failed', retryable: true, code: 'rate_limited' });
    expect((outcome as { retryAfterMs?: number }).retryAfterMs).toBeGreaterThanOrEqual(60_000);
    expect(JSON.stringify(outcome) + logs.join('')).not.toContain(TOKEN);
  });

  test('GitLab 429 with RateLimit-Reset is waited out', async () => {
    host.failNext.push([429, { message: 'Retry later' }, { 'ratelimit-reset': String(Math.floor(Date.now() / 1000) + 4), 'ratelimit-remaining': '0' }]);
    const mr = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, unknown>;
    expect(await deliver(request('gitlab', 'merge_request', mr, 'evt_a', 'hi'))).toMatchObject({ status: 'delivered' });
    expect(waits[0]).toBeGreaterThan(1000);
  });
});
