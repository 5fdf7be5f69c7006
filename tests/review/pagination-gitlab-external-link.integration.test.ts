/**
 * GitLab writes its pagination `Link` with its own configured host and port (external_url),
 * not the address it was asked at (`Gitlab::Pagination::OffsetHeaderBuilder#base_request_uri`).
 * A self-managed GitLab reached at an internal address (`http://gitlab.internal:8080/api/v4`
 * while external_url is `https://gitlab.example.com`) therefore answers every list with a
 * `rel="next"` on another origin. Before (hunt 10 D1), hookagent refused that link and every
 * GitLab list stopped at its first 100 items. Now it reads `X-Next-Page` and asks the same
 * scoped path again; keyset links lend only their query. The fake code host writes its GitLab
 * links on FAKE_GITLAB_EXTERNAL_URL, where nothing listens.
 */
import { BUILTIN_TOOLS } from '../../functions/core/agent/tools';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { QueueMessage } from '../../functions/core/types';
import { FAKE_BOT, FAKE_GITLAB_EXTERNAL_URL, SAMPLE_PATCH, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';
import { deliverComment, mrAt, reviewRequest } from '../support/review-request';

const HEAD = 'cccccccccccccccccccccccccccccccccccccccc';
const THREAD = '/api/v4/projects/1/merge_requests/1';

let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
});

const diffOf = (i: number) => ({ old_path: `src/f${String(i).padStart(3, '0')}.ts`, new_path: `src/f${String(i).padStart(3, '0')}.ts`, diff: `${SAMPLE_PATCH}\n`, new_file: false, renamed_file: false, deleted_file: false });

beforeEach(() => {
  // 150 changed files; the one with the bug is the 140th (the second page).
  host.mrDiffs = Array.from({ length: 150 }, (_, i) => diffOf(i));
  host.extra = (req, res, url) => {
    if (req.method !== 'GET' || url.pathname !== THREAD) return false;
    sendJson(res, 200, { iid: 1, sha: HEAD, diff_refs: { base_sha: 'b'.repeat(40), start_sha: 'b'.repeat(40), head_sha: HEAD } });
    return true;
  };
});

const settings = () => codehostDelivery(host, 2000);
const message: QueueMessage = { v: 1, event_id: 'e0', subscription: 'review', source: 'gitlab', event: 'merge_request', delivery_id: 'd', received_at: '' };
const listFiles = () => BUILTIN_TOOLS.list_changed_files!.run({}, { message, payload: mrAt(HEAD), delivery: settings(), signal: AbortSignal.timeout(5000) });

test('the fake writes its next link on the external host, as GitLab does', async () => {
  const answer = await fetch(`${host.url}${THREAD}/diffs?per_page=100`);
  expect(answer.headers.get('link')).toContain(`<${FAKE_GITLAB_EXTERNAL_URL}${THREAD}/diffs?per_page=100&page=2>; rel="next"`);
  expect(answer.headers.get('x-next-page')).toBe('2');
});

test('list_changed_files lists all 150 files; page 2 is asked on the api_url, under the project, with the token', async () => {
  const listed = await listFiles();
  expect(listed).toContain('src/f139.ts');
  expect(listed).not.toContain('list cut');
  const pages = host.server.requests.filter((r) => r.url.startsWith(`${THREAD}/diffs`));
  expect(pages.map((r) => r.url)).toEqual([`${THREAD}/diffs?per_page=100`, `${THREAD}/diffs?per_page=100&page=2`]);
  expect(pages.every((r) => r.headers['private-token'] === 'gl-T')).toBe(true);
});

test('a finding on the 140th file is posted as a discussion, not folded as "outside the diff"', async () => {
  const finding: Finding = { path: 'src/f139.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero.' };
  expect(await deliverComment(settings(), reviewRequest(settings(), withFindings('Verdict.', [finding]), 'e1', HEAD, 'gitlab'))).toMatchObject({ status: 'delivered' });
  expect(host.comments.get(THREAD)![0]!.body).not.toContain('outside the diff');
  expect(host.discussions).toHaveLength(1);
});

test('on a merge request with 150 notes after the sticky note (system notes count: every push adds one), the sticky note is edited, not posted again', async () => {
  expect(await deliverComment(settings(), reviewRequest(settings(), 'First review.', 'e2', HEAD, 'gitlab'))).toMatchObject({ status: 'delivered' });
  const people = Array.from({ length: 150 }, (_, i) => ({ id: 5000 + i, body: `note ${i}`, html_url: '', author: { id: 7, username: 'dev' } }));
  host.comments.set(THREAD, [...host.comments.get(THREAD)!, ...people]);
  expect(await deliverComment(settings(), reviewRequest(settings(), 'Second review.', 'e3', HEAD, 'gitlab'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
  const mine = host.comments.get(THREAD)!.filter((c) => c.author?.id === FAKE_BOT.id);
  expect(mine.map((c) => c.body.split('\n')[0])).toEqual(['Second review.']);
});

describe('only the validated scope gets a request', () => {
  test('X-Next-Page is asked on the list\'s own path, whatever path and project the link names', async () => {
    host.extra = (req, res, url) => {
      if (req.method !== 'GET' || url.pathname !== `${THREAD}/diffs`) return false;
      const second = url.searchParams.get('page') === '2';
      sendJson(res, 200, second ? [diffOf(1)] : [diffOf(0)], second ? { 'x-next-page': '' } : {
        'x-next-page': '2', link: `<${FAKE_GITLAB_EXTERNAL_URL}/gitlab/api/v4/projects/999/merge_requests/1/diffs?page=2&per_page=100>; rel="next"`,
      });
      return true;
    };
    const listed = await listFiles();
    expect(listed).toContain('src/f001.ts');
    expect(host.server.requests.map((r) => r.url).filter((u) => u.includes('/diffs'))).toEqual([`${THREAD}/diffs?per_page=100`, `${THREAD}/diffs?per_page=100&page=2`]);
  });

  test('a keyset link (no X-Next-Page) lends only its query: the cursor is asked on the list\'s own path', async () => {
    host.extra = (req, res, url) => {
      if (req.method !== 'GET' || url.pathname !== `${THREAD}/diffs`) return false;
      const second = url.searchParams.get('cursor') === 'eyJpZCI6IjQyIn0';
      sendJson(res, 200, second ? [diffOf(1)] : [diffOf(0)], second ? {} : {
        link: `<${FAKE_GITLAB_EXTERNAL_URL}/gitlab/api/v4/projects/1/merge_requests/1/diffs?cursor=eyJpZCI6IjQyIn0&pagination=keyset&per_page=100>; rel="next"`,
      });
      return true;
    };
    const listed = await listFiles();
    expect(listed).toContain('src/f001.ts');
    expect(host.server.requests.map((r) => r.url).filter((u) => u.includes('/diffs'))).toEqual([`${THREAD}/diffs?per_page=100`, `${THREAD}/diffs?cursor=eyJpZCI6IjQyIn0&pagination=keyset&per_page=100`]);
  });
});
