/**
 * GitHub's pagination `Link` headers name the repository by id,
 * `https://api.github.com/repositories/<id>/…?page=2`, not `/repos/<owner>/<repo>/…`
 * (GitHub's "Using pagination in the REST API": `link: <https://api.github.com/repositories/1300192/issues?page=4>; rel="next"`).
 * Before (hunt 9), hookagent refused such links as outside the repository and stopped every
 * GitHub list at its first page (100 items): a pull request's 101st file, 101st comment, …
 * were never seen. The fake code host's own lists answer in this form too.
 */
import { BUILTIN_TOOLS } from '../../functions/core/agent/tools';
import type { Config } from '../../functions/core/config/types';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { QueueMessage } from '../../functions/core/types';
import { FAKE_BOT, FAKE_REPOSITORY_ID as REPO_ID, SAMPLE_PATCH, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';

const HEAD = 'cccccccccccccccccccccccccccccccccccccccc';
let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
});

/** GitHub's list answer: `per_page` items, and `rel="next"` by repository id, as api.github.com writes it. */
function githubPage(res: Parameters<NonNullable<FakeCodehost['extra']>>[1], url: URL, rest: string, items: unknown[]): void {
  const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? '30'));
  const current = Math.max(1, Number(url.searchParams.get('page') ?? '1'));
  const headers: Record<string, string> = {};
  if (current * perPage < items.length) headers.link = `<${host.url}/repositories/${REPO_ID}${rest}?per_page=${perPage}&page=${current + 1}>; rel="next"`;
  sendJson(res, 200, items.slice((current - 1) * perPage, current * perPage), headers);
}

beforeEach(() => {
  host.pullHead = HEAD;
  // 150 changed files; the one with the bug is the 140th (the second page).
  host.files = Array.from({ length: 150 }, (_, i) => ({ filename: `src/f${String(i).padStart(3, '0')}.ts`, status: 'modified', additions: 2, deletions: 1, patch: SAMPLE_PATCH }));
  host.extra = (req, res, url) => {
    if (req.method !== 'GET') return false;
    const m = new RegExp(`^/(?:repos/octo/widgets|repositories/${REPO_ID})(/.*)$`).exec(url.pathname);
    if (!m) return false;
    const rest = m[1]!;
    if (rest === '/pulls/7/files') return githubPage(res, url, rest, host.files), true;
    if (rest === '/pulls/7/comments') return githubPage(res, url, rest, host.reviewComments), true;
    if (rest === '/issues/7/comments') return githubPage(res, url, rest, host.comments.get('/repos/octo/widgets/issues/7') ?? []), true;
    return false;
  };
});

const settings = (): Config['delivery'] => codehostDelivery(host, 2000);
const payload = { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD } } };
const message = (id: string): QueueMessage => ({ v: 1, event_id: id, subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' });
const request = (id: string, reply: string): DeliveryRequest => ({
  subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
  message: message(id), payload, reply, settings: settings(), logger: jsonLogger(() => {}),
});
const deliver = (id: string, reply: string) => createDeliveryTargets(settings(), async () => {}).codehost_comment.deliver(request(id, reply));

test('list_changed_files lists all 150 files of the pull request', async () => {
  const listed = await BUILTIN_TOOLS.list_changed_files!.run({}, { message: message('e1'), payload, delivery: settings(), signal: AbortSignal.timeout(5000) });
  expect(listed).toContain('src/f139.ts');
  expect(listed).not.toContain('list cut');
});

test('a finding on the 140th file is posted inline, not folded as "outside the diff"', async () => {
  const finding: Finding = { path: 'src/f139.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero.' };
  expect(await deliver('e2', withFindings('Verdict.', [finding]))).toMatchObject({ status: 'delivered' });
  const summary = host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
  expect(summary).not.toContain('outside the diff');
  expect(host.reviews).toHaveLength(1);
});

test('on a pull request with 150 comments, the sticky comment (the 120th) is edited, not posted a second time', async () => {
  const thread = '/repos/octo/widgets/issues/7';
  const people = Array.from({ length: 150 }, (_, i) => ({ id: i + 1, body: `comment ${i}`, html_url: `https://example.test/c${i}`, user: { id: 7, login: 'dev', type: 'User' } }));
  host.comments.set(thread, people);
  // The bot's first review came in after 119 comments of discussion.
  expect(await deliver('e3', 'First review.')).toMatchObject({ status: 'delivered' });
  const afterFirst = host.comments.get(thread)!.filter((c) => c.user?.id === FAKE_BOT.id);
  expect(afterFirst).toHaveLength(1);
  // Put it where it was made (the 120th comment), as GitHub lists comments oldest first.
  const list = host.comments.get(thread)!.filter((c) => c.user?.id !== FAKE_BOT.id);
  list.splice(119, 0, afterFirst[0]!);
  host.comments.set(thread, list);
  expect(await deliver('e4', 'Second review.')).toMatchObject({ status: 'delivered' });
  const mine = host.comments.get(thread)!.filter((c) => c.user?.id === FAKE_BOT.id);
  expect(mine.map((c) => c.body.split('\n')[0])).toEqual(['Second review.']);
});

