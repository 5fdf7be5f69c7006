/**
 * `webhook events <name>` lists the requests that subscription's payload filters turned
 * away "from the request log, so for 7 days" (README): not only among the newest 1,000
 * entries of the whole log, which other endpoints' traffic fills within hours (hunt 11
 * D3). The built CLI over `hookagent serve`, signed GitHub deliveries.
 */
import { signHub } from '../../functions/core/auth/signatures';
import { useServeWithTelegram } from '../support/serve-telegram';

const GH_SECRET = 'filtered-listing-secret';
const h = useServeWithTelegram({ prefix: 'hookagent-filtered-listing-', webhooks: '{ github: { secret: ${GH_SECRET} } }', env: { GH_SECRET } });
const { cli } = h;

async function post(event: string, payload: unknown, delivery: string): Promise<{ status: number; body: { status?: string; reason?: string } }> {
  const body = JSON.stringify(payload);
  const response = await fetch(`${h.serve.url}/webhooks/github`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': delivery, 'x-hub-signature-256': signHub(body, GH_SECRET) },
  });
  return { status: response.status, body: (await response.json()) as { status?: string; reason?: string } };
}

const issue = (number: number) => ({ action: 'opened', issue: { number }, repository: { full_name: 'o/r' } });
type Row = { status: string; request_id: string | null; event_id: string | null; reason?: string };

async function events(...args: string[]): Promise<Row[]> {
  const result = await cli('webhook', 'events', ...args, '--json');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Row[];
}

test('requests the filters turned away are still listed (--status filtered and the default listing) after 1,000 newer requests of the hook', async () => {
  expect((await cli('webhook', 'subscribe', 'big-issues', '--events', 'issues.opened', '--agent', 'none', '--filter', 'issue.number > 100', '--prompt', 'issue {issue.number}')).code).toBe(0);
  expect((await cli('webhook', 'subscribe', 'all-issues', '--events', 'issues.opened', '--agent', 'none', '--prompt', 'issue {issue.number}')).code).toBe(0);
  // #7 and #8: filtered for big-issues, accepted for all-issues (the entry's outcome is `accepted`); #101: accepted for both.
  expect((await post('issues', issue(7), 'flt-7')).status).toBe(202);
  expect((await post('issues', issue(8), 'flt-8')).status).toBe(202);
  expect((await post('issues', issue(101), 'flt-101')).status).toBe(202);
  expect(await events('big-issues', '--status', 'filtered')).toHaveLength(2);
  // Ordinary traffic on the same GitHub hook that no subscription takes (answered "Event not handled").
  for (let i = 0; i < 1000; i++) expect((await post('push', { ref: 'refs/heads/main', commits: [], repository: { full_name: 'o/r' } }, `push-${i}`)).status).toBe(200);

  const filtered = await events('big-issues', '--status', 'filtered');
  expect(filtered).toEqual([
    expect.objectContaining({ status: 'filtered', event_id: null, reason: 'filter "issue.number > 100" failed (issue.number is 8)' }),
    expect.objectContaining({ status: 'filtered', event_id: null, reason: 'filter "issue.number > 100" failed (issue.number is 7)' }),
  ]);
  expect(filtered[0]!.request_id).toMatch(/^req_/);
  // The default listing: the event big-issues took and both filtered requests, newest first.
  expect((await events('big-issues')).map((r) => r.status === 'filtered' ? r.reason : 'event')).toEqual([
    'event', 'filter "issue.number > 100" failed (issue.number is 8)', 'filter "issue.number > 100" failed (issue.number is 7)',
  ]);
  // --limit applies to them too; the other subscription has none.
  expect(await events('big-issues', '--status', 'filtered', '--limit', '1')).toEqual([expect.objectContaining({ reason: 'filter "issue.number > 100" failed (issue.number is 8)' })]);
  expect(await events('all-issues', '--status', 'filtered')).toEqual([]);
  // `webhook event req_…` still opens the newest one.
  const entry = await cli('webhook', 'event', filtered[0]!.request_id as string, '--json');
  expect(entry.code).toBe(0);
}, 180_000);
