/**
 * Subscriptions that fire when users mean (hunt 9), end to end through `hookagent serve`, the
 * CLI and a Telegram-compatible server on 127.0.0.1: debounce keeps CI jobs of different
 * commits apart (it merged every `workflow_job` / GitLab Job Hook of a repository into one
 * run), and dotted custom event types can be subscribed to (`subscribe` refused them).
 */
import { eventually } from '../support/serve';
import { useServeWithTelegram } from '../support/serve-telegram';
import { signHub } from '../../functions/core/auth/signatures';

const GH_SECRET = 'subjects-github-secret';
const GL_SECRET = 'subjects-gitlab-secret';
const h = useServeWithTelegram({ prefix: 'hookagent-subjects-', webhooks: '{ github: { secret: ${GH_SECRET} }, gitlab: { secret: ${GL_SECRET} } }', env: { GH_SECRET, GL_SECRET } });
const { cli, texts, postGithub: post } = h;

interface Rec { status: string; superseded_by?: string; error?: { message: string } }
async function record(eventId: string): Promise<Rec> {
  const result = await cli('webhook', 'event', eventId, '--json');
  if (result.code !== 0) throw new Error(`webhook event ${eventId} exited ${result.code}: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as unknown;
  return (Array.isArray(parsed) ? parsed[0] : parsed) as Rec;
}
const FINAL = ['delivered', 'superseded', 'failed', 'suppressed', 'rate_limited', 'over_budget'];
const finished = (id: string) => eventually(async () => FINAL.includes((await record(id)).status), `${id} to finish`, 30_000);

async function postGitlab(kind: string, payload: unknown, uuid: string): Promise<string> {
  const response = await fetch(`${h.serve.url}/webhooks/gitlab`, {
    method: 'POST', body: JSON.stringify(payload),
    headers: { 'content-type': 'application/json', 'x-gitlab-event': kind, 'x-gitlab-token': GL_SECRET, 'x-gitlab-event-uuid': uuid },
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { event_id: string }).event_id;
}

test('debounce does not merge CI jobs of different branches/pipelines into one run (GitHub workflow_job, GitLab Job Hook)', async () => {
  // README: "runs only the latest event of a burst per subject: the pull/merge request, issue,
  // commit or alert group the event is about".
  expect((await cli('webhook', 'subscribe', 'gh-jobs', '--events', 'workflow_job.completed', '--agent', 'none', '--deliver', 'messenger', '--debounce', '2s',
    '--prompt', 'job {workflow_job.name} failed on {workflow_job.head_branch}')).code).toBe(0);
  expect((await cli('webhook', 'subscribe', 'gl-jobs', '--events', 'gitlab:build', '--agent', 'none', '--deliver', 'messenger', '--debounce', '2s',
    '--prompt', 'job {build_name} failed on {ref}')).code).toBe(0);
  const ghJob = (id: number, branch: string, sha: string) => ({
    action: 'completed', workflow_job: { id, run_id: id * 10, name: 'test', head_branch: branch, head_sha: sha, status: 'completed', conclusion: 'failure' }, repository: { full_name: 'o/r' },
  });
  const a = await post('workflow_job', ghJob(1, 'feat-a', '1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'), 'job-1');
  const b = await post('workflow_job', ghJob(2, 'feat-b', '2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'), 'job-2');
  // GitLab's Job Hook (object_kind build), two jobs of two pipelines on two commits.
  const glJob = (id: number, ref: string, sha: string) => ({
    object_kind: 'build', ref, tag: false, sha, build_id: id, build_name: 'rspec', build_stage: 'test', build_status: 'failed', pipeline_id: id * 10,
    project_id: 5, project_name: 'group / app', commit: { id: 1, sha }, project: { id: 5, path_with_namespace: 'group/app' },
  });
  const c = await postGitlab('Job Hook', glJob(3, 'feat-c', '3333333ccccccccccccccccccccccccccccccccc'), 'job-3');
  const d = await postGitlab('Job Hook', glJob(4, 'feat-d', '4444444ddddddddddddddddddddddddddddddddd'), 'job-4');
  for (const id of [a, b, c, d]) await finished(id);
  const statuses = await Promise.all([a, b, c, d].map(async (id) => (await record(id)).status));
  // Before: a was superseded by b and c by d; the failures on feat-a and feat-c were never reported.
  expect(statuses).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
  expect(texts().sort()).toEqual(['job rspec failed on feat-c', 'job rspec failed on feat-d', 'job test failed on feat-a', 'job test failed on feat-b']);
  expect((await cli('webhook', 'delete', 'gh-jobs')).code).toBe(0);
  expect((await cli('webhook', 'delete', 'gl-jobs')).code).toBe(0);
}, 90_000);

test('--events deploy.finished.ok (README "Custom event types are free text") is accepted and takes deploy.finished with action ok', async () => {
  const subscribe = await cli('webhook', 'subscribe', 'deploys', '--events', 'deploy.finished.ok', '--agent', 'none', '--deliver', 'messenger', '--prompt', 'deployed {version}');
  // Before: exit 1, "Invalid event filter "deploy.finished.ok": write an event name such as …".
  expect(subscribe.stderr).not.toContain('Invalid event filter');
  expect(subscribe.code).toBe(0);
  const secret = (JSON.parse((await cli('webhook', 'show', 'deploys', '--json', '--show-secret')).stdout) as { secret: string }).secret;
  const send = async (action: string, version: string) => {
    const body = JSON.stringify({ type: 'deploy.finished', action, version });
    const response = await fetch(`${h.serve.url}/webhooks/custom/deploys`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': signHub(body, secret) } });
    return (await response.json()) as { status: string; event_id?: string };
  };
  const ok = await send('ok', '1.2.3');
  expect(ok.status).toBe('accepted');
  expect((await send('failed', '1.2.4')).status).toBe('ignored');
  await finished(ok.event_id as string);
  expect(texts()).toEqual(['deployed 1.2.3']);
  expect((await cli('webhook', 'delete', 'deploys')).code).toBe(0);
}, 90_000);
