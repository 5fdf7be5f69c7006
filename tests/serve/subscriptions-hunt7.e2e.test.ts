/**
 * Subscriptions fire when the user means (hunt 7), end to end through `hookagent serve`,
 * the CLI and a Telegram-compatible server on 127.0.0.1:
 * - an event queued (debounced) before a pause is superseded by a later event of its
 *   subject that was held during the pause: the older commit never runs after the newer;
 * - held events that `update` made the subscription no longer take (its events or filters)
 *   are not run by `resume`: they end `suppressed` with the reason, and resume says so;
 * - `webhook test` and `test --send` with a GitLab payload for a subscription whose first
 *   event filter is a GitHub one say what serve does with that payload.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../support/serve';
import { useServeWithTelegram } from '../support/serve-telegram';

const GH_SECRET = 'hunt7-github-secret';
const GL_SECRET = 'hunt7-gitlab-secret';
const h = useServeWithTelegram({ prefix: 'hookagent-hunt7-', webhooks: '{ github: { secret: ${GH_SECRET} }, gitlab: { secret: ${GL_SECRET} } }', env: { GH_SECRET, GL_SECRET } });
const { cli, texts, postGithub: post } = h;

const pr = (sha: string) => ({ action: 'synchronize', number: 9, pull_request: { number: 9, head: { sha } }, repository: { full_name: 'o/r' } });

async function record(eventId: string): Promise<{ status: string; superseded_by?: string }> {
  const result = await cli('webhook', 'event', eventId, '--json');
  if (result.code !== 0) throw new Error(`webhook event ${eventId} exited ${result.code}: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as unknown;
  return (Array.isArray(parsed) ? parsed[0] : parsed) as { status: string; superseded_by?: string };
}

const FINAL = ['delivered', 'superseded', 'failed', 'suppressed'];

test('an event queued before a pause is superseded by a later one of its subject held during the pause', async () => {
  expect((await cli('webhook', 'subscribe', 'order', '--events', 'pull_request', '--agent', 'none', '--deliver', 'messenger', '--debounce', '4s', '--prompt', 'review of {pull_request.head.sha}')).code).toBe(0);
  const older = await post('pull_request', pr('old-sha'), 'order-1');
  expect((await cli('webhook', 'pause', 'order')).code).toBe(0);
  const newer = await post('pull_request', pr('new-sha'), 'order-2');
  expect((await record(newer)).status).toBe('held');
  // Resumed within the older event's debounce window: the held one is released at once.
  expect((await cli('webhook', 'resume', 'order')).stdout).toContain('released 1 held event(s)');
  await eventually(async () => FINAL.includes((await record(newer)).status), 'the newer event to finish', 30_000);
  await eventually(async () => FINAL.includes((await record(older)).status), 'the older event to come out of its debounce window', 30_000);
  expect(await record(older)).toMatchObject({ status: 'superseded', superseded_by: newer });
  expect((await record(newer)).status).toBe('delivered');
  // Without the fix the older commit's review was delivered too, after the newer one.
  expect(texts()).toEqual(['review of new-sha']);
  expect((await cli('webhook', 'delete', 'order')).code).toBe(0);
}, 90_000);

const gitlabMr = {
  object_kind: 'merge_request', event_type: 'merge_request', user: { username: 'dev' },
  project: { id: 5, path_with_namespace: 'group/app', web_url: 'https://gitlab.example/group/app' },
  object_attributes: { iid: 12, action: 'open', title: 'Add a thing', source_branch: 'feat', target_branch: 'main', last_commit: { id: 'abc123' } },
};

test('webhook test and test --send judge a GitLab payload as serve does when the first event filter is a GitHub one', async () => {
  expect((await cli('webhook', 'subscribe', 'both-hosts', '--events', 'issues.opened,merge_request', '--agent', 'none', '--deliver', 'messenger', '--prompt', 'MR !{object_attributes.iid} in {project.path_with_namespace}')).code).toBe(0);
  const payload = join(h.dir, 'mr.json');
  writeFileSync(payload, JSON.stringify(gitlabMr));

  const rendered = await cli('webhook', 'test', 'both-hosts', '--payload', payload);
  expect(rendered.code).toBe(0);
  expect(rendered.stdout).toContain('MR !12 in group/app');
  // Serve takes this payload (gitlab:merge_request.open matches merge_request): test must not say otherwise.
  expect(rendered.stdout).not.toContain('would NOT reach the subscription');

  const sent = await cli('webhook', 'test', 'both-hosts', '--send', '--url', h.serve.url, '--payload', payload, '--wait', '20');
  expect(sent.stdout).toContain('POST /webhooks/gitlab → 202');
  expect(sent.stdout).toContain('Outcome: delivered');
  expect(texts()).toEqual(['MR !12 in group/app']);

  const logged = JSON.parse((await cli('webhook', 'requests', '--endpoint', 'gitlab', '--json')).stdout) as Array<{ outcome: string; event: string; action?: string }>;
  expect(logged[0]).toMatchObject({ outcome: 'accepted', event: 'merge_request', action: 'open' });

  // A GitLab payload its event filters do not take is still said so (on the GitLab endpoint, as serve would classify it).
  writeFileSync(payload, JSON.stringify({ ...gitlabMr, object_kind: 'pipeline', object_attributes: { id: 1, status: 'success' } }));
  const pipeline = await cli('webhook', 'test', 'both-hosts', '--payload', payload);
  expect(pipeline.stdout).toContain('would NOT reach the subscription');
  expect(pipeline.stdout).toContain('do not match gitlab:pipeline');
  expect((await cli('webhook', 'delete', 'both-hosts')).code).toBe(0);
}, 90_000);

test('resume does not run held events the subscription, updated while they were held, no longer takes', async () => {
  expect((await cli('webhook', 'subscribe', 'narrowed', '--events', 'issues', '--agent', 'none', '--deliver', 'messenger', '--prompt', 'issue {issue.number} {action}')).code).toBe(0);
  expect((await cli('webhook', 'pause', 'narrowed')).code).toBe(0);
  const issue = (action: string, number: number, label: string) => ({ action, issue: { number, title: 't', labels: [{ name: label }] }, repository: { full_name: 'o/r' } });
  const kept = await post('issues', issue('opened', 1, 'bug'), 'narrow-1');
  const closed = await post('issues', issue('closed', 2, 'bug'), 'narrow-2');
  const unlabelled = await post('issues', issue('opened', 3, 'docs'), 'narrow-3');
  for (const id of [kept, closed, unlabelled]) expect((await record(id)).status).toBe('held');
  // Narrowed while paused: only opened issues, only bugs.
  expect((await cli('webhook', 'update', 'narrowed', '--events', 'issues.opened', '--filter', 'any(issue.labels[*].name == bug)')).code).toBe(0);
  const resumed = await cli('webhook', 'resume', 'narrowed');
  expect(resumed.code).toBe(0);
  expect(resumed.stdout).toContain('released 1 held event(s)');
  expect(resumed.stdout).toMatch(/2 held event\(s\) were not run: the subscription, updated while they were held, no longer takes them \('.*hookagent .*webhook events narrowed --status suppressed' lists them\)/);
  await eventually(async () => (await record(kept)).status === 'delivered', 'the matching held event to be delivered', 30_000);
  const closedRecord = (await record(closed)) as { status: string; warnings?: string[] };
  expect(closedRecord.status).toBe('suppressed');
  expect(closedRecord.warnings?.join(' ')).toContain('event filters issues.opened do not match github:issues.closed');
  const unlabelledRecord = (await record(unlabelled)) as { status: string; warnings?: string[] };
  expect(unlabelledRecord.status).toBe('suppressed');
  expect(unlabelledRecord.warnings?.join(' ')).toMatch(/filter "any\(issue\.labels\[\*\]\.name == bug\)" failed/);
  // Before, all three ran on resume.
  expect(texts()).toEqual(['issue 1 opened']);
  const listed = JSON.parse((await cli('webhook', 'events', 'narrowed', '--status', 'suppressed', '--json')).stdout) as Array<{ event_id: string }>;
  expect(listed.map((e) => e.event_id).sort()).toEqual([closed, unlabelled].sort());
  expect((await cli('webhook', 'delete', 'narrowed')).code).toBe(0);
}, 90_000);
