/**
 * The marker search on a thread with more than 3,000 comments (hunt 10 targets). It reads at
 * most 3,000. GitHub lists issue comments oldest first and cannot sort them, so the search
 * read the 3,000 oldest and never saw the event's own comment or the sticky one: every event
 * posted a second sticky review, and a POST answered 502 after GitHub made it was posted
 * again. GitLab listed notes by `created_at`, so an edited sticky note fell out of the window
 * once 3,000 newer notes existed. Now GitHub's list is read from its last page back
 * (`rel="last"`, then `rel="prev"`, each link checked like `rel="next"`), GitLab's notes by
 * `updated_at`, newest first, and a search that still stops early is logged.
 */
import { botComment, FAKE_BOT, FAKE_REPOSITORY_ID, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson, startLocalServer } from '../support/local-http';
import { deliverComment, reviewRequest } from '../support/review-request';
import { jsonLogger } from '../../functions/core/log';
import type { DeliveryRequest } from '../../functions/core/delivery/target';

const HEAD_1 = '1'.repeat(40);
const HEAD_2 = '2'.repeat(40);
const GH_THREAD = '/repos/octo/widgets/issues/7';
const GL_THREAD = '/api/v4/projects/1/merge_requests/1';

let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
});

const settings = () => codehostDelivery(host, 2000);
const others = (count: number, from = 100_000) => Array.from({ length: count }, (_, i) => ({ id: from + i, body: `comment ${i}`, html_url: `u${from + i}`, user: { id: 7, login: 'dev', type: 'User' } }));
let logs: string[] = [];
beforeEach(() => {
  logs = [];
});
/** The review subscription's delivery, with its log lines kept in `logs`. */
const request = (reply: string, eventId: string, sha: string, source: 'github' | 'gitlab' = 'github', mode?: 'new'): DeliveryRequest => {
  const base = reviewRequest(settings(), reply, eventId, sha, source);
  return { ...base, subscription: { ...base.subscription, ...(mode ? { comment_mode: mode } : {}) }, logger: jsonLogger((line) => logs.push(line)) };
};
const stickies = (thread: string) => host.comments.get(thread)!.filter((c) => (c.user?.id ?? c.author?.id) === FAKE_BOT.id).map((c) => c.body.split('\n')[0]);
/** The warnings of searches that stopped early without finding what they looked for (a first post on a long thread has one too). */
const truncatedWarnings = (eventId?: string) => logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.message === 'codehost_marker_search_truncated' && (eventId === undefined || l.event_id === eventId));

describe('GitHub: the search reads the newest comments first', () => {
  test('a comment answered 502 after GitHub made it is not posted again on a thread with 3,100 comments', async () => {
    host.comments.set(GH_THREAD, others(3100));
    let answered502 = false;
    host.extra = (req, res, url) => {
      if (req.method !== 'POST' || url.pathname !== `${GH_THREAD}/comments` || answered502) return false;
      // GitHub keeps the comment, then a gateway answers 502.
      answered502 = true;
      host.comments.get(GH_THREAD)!.push(botComment(9001, (JSON.parse(req.body) as { body: string }).body));
      sendJson(res, 502, { message: 'Server Error' });
      return true;
    };
    expect(await deliverComment(settings(), request('Needs info.', 'evt_many', HEAD_1, 'github', 'new'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('already posted') });
    expect(stickies(GH_THREAD)).toEqual(['Needs info.']);
    // Only the search before the first POST, which had nothing to find.
    expect(truncatedWarnings()).toHaveLength(1);
  });

  test('a sticky review on a pull request with 3,100 comments is edited, not posted again for each event', async () => {
    host.comments.set(GH_THREAD, others(3100));
    expect(await deliverComment(settings(), request('Review 1', 'evt_a', HEAD_1))).toMatchObject({ status: 'delivered' });
    host.server.requests.length = 0;
    expect(await deliverComment(settings(), request('Review 2', 'evt_b', HEAD_2))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
    expect(stickies(GH_THREAD)).toEqual(['Review 2']);
    // The first page (for its links), then the last one, which holds the sticky comment: not the 3,000 oldest.
    const pages = host.server.requests.filter((r) => r.method === 'GET' && r.url.startsWith(`${GH_THREAD}/comments`)).map((r) => new URL(r.url, host.url).searchParams.get('page'));
    expect(pages).toEqual([null, '32']);
    expect(truncatedWarnings('evt_b')).toEqual([]);
  });

  test('a sticky comment made before 3,100 more (when the pull request opened) is found among the oldest, and edited', async () => {
    expect(await deliverComment(settings(), request('Review 1', 'evt_a', HEAD_1))).toMatchObject({ status: 'delivered' });
    host.comments.set(GH_THREAD, [...host.comments.get(GH_THREAD)!, ...others(3100, 200_000)]);
    expect(await deliverComment(settings(), request('Review 2', 'evt_b', HEAD_2))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
    expect(stickies(GH_THREAD)).toEqual(['Review 2']);
    expect(truncatedWarnings('evt_b')).toEqual([]);
  });

  test('a sticky comment with more than 3,000 comments on each side is not found: the search says so in a warning', async () => {
    host.comments.set(GH_THREAD, others(3100));
    expect(await deliverComment(settings(), request('Review 1', 'evt_a', HEAD_1))).toMatchObject({ status: 'delivered' });
    host.comments.set(GH_THREAD, [...host.comments.get(GH_THREAD)!, ...others(3100, 200_000)]);
    expect(await deliverComment(settings(), request('Review 2', 'evt_b', HEAD_2))).toMatchObject({ status: 'delivered' });
    expect(truncatedWarnings('evt_b')).toEqual([expect.objectContaining({ level: 'warn', event_id: 'evt_b', subscription: 'review', read: 6000, why: 'stopped at 3000 items' })]);
  });

  test('a list of one page is read once', async () => {
    host.comments.set(GH_THREAD, others(5));
    expect(await deliverComment(settings(), request('Review 1', 'evt_a', HEAD_1))).toMatchObject({ status: 'delivered' });
    expect(host.server.requests.filter((r) => r.method === 'GET' && r.url.startsWith(`${GH_THREAD}/comments`)).map((r) => r.url)).toEqual([`${GH_THREAD}/comments?per_page=100`]);
  });

  describe('rel="last" and rel="prev" get the checks rel="next" gets', () => {
    const byId = (page: number) => `<${host.url}/repositories/${FAKE_REPOSITORY_ID}/issues/7/comments?per_page=100&page=${page}>`;

    test('a last page on another host is not asked (no token there): the list is read forwards', async () => {
      const other = await startLocalServer((_req, res) => sendJson(res, 200, []));
      try {
        host.extra = (req, res, url) => {
          if (req.method !== 'GET' || url.pathname !== `${GH_THREAD}/comments`) return false;
          const first = url.searchParams.get('page') === null;
          sendJson(res, 200, others(100), first ? { link: `${byId(2)}; rel="next", <${other.url}${GH_THREAD}/comments?per_page=100&page=2>; rel="last"` } : {});
          return true;
        };
        expect(await deliverComment(settings(), request('Review 1', 'evt_a', HEAD_1))).toMatchObject({ status: 'delivered' });
        expect(other.requests).toHaveLength(0);
        expect(host.server.requests.filter((r) => r.method === 'GET').map((r) => r.url)).toEqual([`${GH_THREAD}/comments?per_page=100`, `${GH_THREAD}/comments?per_page=100&page=2`]);
      } finally {
        await other.close();
      }
    });

    test('a previous page outside the repository is not asked', async () => {
      host.extra = (req, res, url) => {
        if (req.method !== 'GET' || url.pathname !== `${GH_THREAD}/comments`) return false;
        const page = Number(url.searchParams.get('page') ?? '1');
        const link = page === 1 ? `${byId(2)}; rel="next", ${byId(3)}; rel="last"` : page === 2 ? `${byId(3)}; rel="next", ${byId(3)}; rel="last"` : `<${host.url}/admin/escape?page=2>; rel="prev"`;
        sendJson(res, 200, others(100, page * 100), { link });
        return true;
      };
      expect(await deliverComment(settings(), request('Review 1', 'evt_a', HEAD_1))).toMatchObject({ status: 'delivered' });
      const asked = host.server.requests.map((r) => r.url);
      expect(asked.filter((u) => u.startsWith('/admin') || u.startsWith('/repositories'))).toHaveLength(0);
      // The last page, named by repository id, is read under the repository's own path.
      expect(asked.slice(0, 2)).toEqual([`${GH_THREAD}/comments?per_page=100`, `${GH_THREAD}/comments?per_page=100&page=3`]);
    });
  });
});

describe('GitLab: the search reads the most recently updated notes first', () => {
  test('the sticky review note is edited, not posted again, when 3,100 notes came after it', async () => {
    expect(await deliverComment(settings(), request('Review 1', 'evt_a', HEAD_1, 'gitlab'))).toMatchObject({ status: 'delivered' });
    const notes = Array.from({ length: 3100 }, (_, i) => ({ id: 20_000 + i, body: `note ${i}`, html_url: '', author: { id: 7, username: 'dev' } }));
    host.comments.set(GL_THREAD, [...host.comments.get(GL_THREAD)!, ...notes]);
    expect(await deliverComment(settings(), request('Review 2', 'evt_b', HEAD_2, 'gitlab'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
    expect(stickies(GL_THREAD)).toEqual(['Review 2']);
    expect(truncatedWarnings('evt_b')).toEqual([]);
  });

  test('a sticky note edited since is found by its update: 3,100 notes before it, 2,000 after each review', async () => {
    const notes = (count: number, from: number) => Array.from({ length: count }, (_, i) => ({ id: from + i, body: `note ${i}`, html_url: '', author: { id: 7, username: 'dev' } }));
    host.comments.set(GL_THREAD, notes(3100, 20_000));
    expect(await deliverComment(settings(), request('Review 1', 'evt_a', HEAD_1, 'gitlab'))).toMatchObject({ status: 'delivered' });
    host.comments.set(GL_THREAD, [...host.comments.get(GL_THREAD)!, ...notes(2000, 30_000)]);
    expect(await deliverComment(settings(), request('Review 2', 'evt_b', HEAD_2, 'gitlab'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
    host.comments.set(GL_THREAD, [...host.comments.get(GL_THREAD)!, ...notes(2000, 40_000)]);
    expect(await deliverComment(settings(), request('Review 3', 'evt_c', '3'.repeat(40), 'gitlab'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
    expect(stickies(GL_THREAD)).toEqual(['Review 3']);
    expect(host.server.requests.filter((r) => r.method === 'GET' && r.url.startsWith(`${GL_THREAD}/notes`)).map((r) => r.url.replace(/&page=\d+$/, ''))).toEqual(expect.arrayContaining([`${GL_THREAD}/notes?order_by=updated_at&sort=desc&per_page=100`]));
    expect([...truncatedWarnings('evt_b'), ...truncatedWarnings('evt_c')]).toEqual([]);
  });
});
