import githubExamples from '@octokit/webhooks-examples';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { githubRepo, githubRepoPath, gitlabProject, gitlabProjectPath, subjectOf } from '../../functions/core/events/subject';

const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', name), 'utf8')) as Record<string, unknown>;
const example = (event: string, action?: string) => {
  const group = (githubExamples as Array<{ name: string; examples: Array<Record<string, unknown>> }>).find((g) => g.name === event);
  const found = group?.examples.find((e) => action === undefined || e.action === action);
  if (!found) throw new Error(`no example ${event}.${action}`);
  return found;
};

describe('subjectOf: what an event is about', () => {
  it('a GitHub pull request: repository, number, head commit, and a key shared by every event of that PR', () => {
    const opened = subjectOf('github', 'pull_request', example('pull_request', 'opened'), 'e1');
    expect(opened).toMatchObject({ host: 'github', kind: 'pull_request', repo: { owner: 'Codertocat', name: 'Hello-World' }, number: 2 });
    expect(opened.commit).toMatch(/^[0-9a-f]{40}$/);
    const synced = subjectOf('github', 'pull_request', example('pull_request', 'synchronize'), 'e2');
    expect(synced.kind).toBe('pull_request');
    expect(subjectOf('github', 'pull_request', { ...example('pull_request', 'opened') }, 'e3').key).toBe(opened.key);
  });

  it('a GitHub issue comment on a pull request is about the pull request', () => {
    const payload = example('issue_comment', 'created');
    const subject = subjectOf('github', 'issue_comment', payload, 'e1');
    expect(subject.kind).toBe('issue');
    const onPr = { ...payload, issue: { ...(payload.issue as object), pull_request: { url: 'x' } } };
    expect(subjectOf('github', 'issue_comment', onPr, 'e1').kind).toBe('pull_request');
  });

  it('a GitHub push is about its head commit', () => {
    const subject = subjectOf('github', 'push', example('push'), 'e1');
    expect(subject.kind).toBe('commit');
    expect(subject.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it('GitLab merge requests, issues, notes and pipelines', () => {
    expect(subjectOf('gitlab', 'merge_request', fixture('gitlab/merge_request.json'), 'e1')).toMatchObject({ host: 'gitlab', kind: 'merge_request', number: 1 });
    expect(subjectOf('gitlab', 'issue', fixture('gitlab/issue.json'), 'e1')).toMatchObject({ host: 'gitlab', kind: 'issue' });
    expect(subjectOf('gitlab', 'note', fixture('gitlab/note_merge_request.json'), 'e1')).toMatchObject({ kind: 'merge_request' });
    expect(subjectOf('gitlab', 'push', fixture('gitlab/push.json'), 'e1')).toMatchObject({ kind: 'commit' });
  });

  it('alert groups: Alertmanager and Grafana group keys, PagerDuty incidents', () => {
    const am = subjectOf('custom', 'custom', fixture('alerts/alertmanager.json'), 'e1');
    expect(am.kind).toBe('alert');
    expect(subjectOf('custom', 'custom', fixture('alerts/alertmanager.json'), 'e2').key).toBe(am.key);
    expect(subjectOf('custom', 'custom', fixture('alerts/grafana.json'), 'e1').kind).toBe('alert');
    expect(subjectOf('custom', 'custom', fixture('alerts/pagerduty_v3.json'), 'e1').kind).toBe('alert');
  });

  it('an alert group belongs to the Alertmanager or Grafana that formed it: the same groupKey of two instances is two subjects', () => {
    const am = fixture('alerts/alertmanager.json');
    const key = (payload: Record<string, unknown>) => subjectOf('custom', 'alert', payload, 'e1').key;
    const prod = { ...am, externalURL: 'http://alertmanager.prod.example.com:9093' };
    const staging = { ...am, externalURL: 'http://alertmanager.staging.example.com:9093' };
    expect(key(prod)).not.toBe(key(staging));
    // HA replicas share their externalURL: their duplicate notifications stay one subject.
    expect(key({ ...prod, alerts: [] })).toBe(key(prod));
    // Grafana: one instance, two orgs, its documented groupKey `{}:{}`.
    const grafana = fixture('alerts/grafana.json');
    expect(key({ ...grafana, orgId: 2 })).not.toBe(key(grafana));
    expect(key({ ...grafana, externalURL: 'https://grafana.example.com/' })).not.toBe(key(grafana));
    expect(key({ ...grafana })).toBe(key(grafana));
  });

  it('no subject: the key is the event itself, so unrelated events are never merged', () => {
    expect(subjectOf('custom', 'deploy', { service: 'api' }, 'e1')).toEqual({ kind: 'other', key: 'event:e1' });
  });

  it('payload text that would leave the API path yields no subject part', () => {
    for (const full_name of ['../../admin/escape', 'a/b/c', 'owner/..', '-x/y', 'o/r?x=1', 'o/r#', 'o%2F/r', 'o/r\n']) {
      const subject = subjectOf('custom', 'x', { repository: { full_name }, pull_request: { number: 1 } }, 'e1');
      expect(subject.host).toBeUndefined();
      expect(githubRepo(full_name)).toBeUndefined();
    }
    for (const number of [0, -1, 1.5, '1/../2', '01', 1e300, '2 ']) {
      expect(subjectOf('github', 'pull_request', { repository: { full_name: 'o/r' }, pull_request: { number } }, 'e1').number).toBeUndefined();
    }
    for (const id of ['../x', 'a/../b', '', '1/2?x', 'group/pro ject']) expect(gitlabProject(id)).toBeUndefined();
    expect(gitlabProject('group/sub.group/project')).toBe('group/sub.group/project');
  });

  it('paths are built from validated parts and encoded', () => {
    expect(githubRepoPath({ owner: 'octo-org', name: 'my.repo' })).toBe('/repos/octo-org/my.repo');
    expect(gitlabProjectPath('group/project')).toBe('/projects/group%2Fproject');
    expect(gitlabProjectPath('42')).toBe('/projects/42');
  });
});

describe('events that name no pull request or issue get their own subject, never one per repository (hunt 9: debounce merged them)', () => {
  const examples = githubExamples as unknown as Array<{ name: string; examples: Array<Record<string, unknown>> }>;
  const github = (event: string, i = 0) => examples.find((g) => g.name === event)!.examples[i]!;
  const keyOf = (source: 'github' | 'gitlab' | 'custom', event: string, payload: Record<string, unknown>, id: string) => subjectOf(source, event, payload, id).key;

  test('GitHub workflow_job and deployments: the commit they ran on', () => {
    const job = github('workflow_job');
    const sha = (job.workflow_job as { head_sha: string }).head_sha;
    expect(subjectOf('github', 'workflow_job', job, 'e1')).toMatchObject({ host: 'github', kind: 'commit', commit: sha });
    const other = { ...job, workflow_job: { ...(job.workflow_job as object), head_sha: 'b'.repeat(40) } };
    expect(keyOf('github', 'workflow_job', other, 'e2')).not.toBe(keyOf('github', 'workflow_job', job, 'e1'));
    const deployed = github('deployment_status');
    expect(subjectOf('github', 'deployment_status', deployed, 'e3')).toMatchObject({ kind: 'commit', commit: (deployed.deployment as { sha: string }).sha });
  });

  test('GitHub discussions: one subject per discussion', () => {
    const discussion = github('discussion');
    const number = (discussion.discussion as { number: number }).number;
    expect(keyOf('github', 'discussion', discussion, 'e1')).toBe(keyOf('github', 'discussion_comment', { ...github('discussion_comment'), repository: discussion.repository, discussion: { number } }, 'e2'));
    expect(keyOf('github', 'discussion', { ...discussion, discussion: { number: number + 1 } }, 'e3')).not.toBe(keyOf('github', 'discussion', discussion, 'e1'));
  });

  test('a release, a GitLab release or wiki page: no subject (the event itself), the repository kept for tools', () => {
    expect(subjectOf('github', 'release', github('release'), 'e1')).toMatchObject({ host: 'github', kind: 'other', key: 'event:e1' });
    expect(subjectOf('gitlab', 'release', fixture('gitlab/release.json'), 'e2')).toMatchObject({ host: 'gitlab', kind: 'other', key: 'event:e2' });
    expect(subjectOf('gitlab', 'wiki_page', { object_kind: 'wiki_page', project: { id: 5 }, object_attributes: { slug: 'home' } }, 'e3')).toMatchObject({ host: 'gitlab', key: 'event:e3' });
  });

  test('GitLab Job Hook: the commit its pipeline ran on', () => {
    const job = (sha: string) => ({ object_kind: 'build', ref: 'feat', sha, build_id: 3, build_status: 'failed', project_id: 5, commit: { id: 1, sha }, project: { id: 5 } });
    expect(subjectOf('gitlab', 'build', job('c'.repeat(40)), 'e1')).toMatchObject({ kind: 'commit', commit: 'c'.repeat(40) });
    expect(keyOf('gitlab', 'build', job('d'.repeat(40)), 'e2')).not.toBe(keyOf('gitlab', 'build', job('c'.repeat(40)), 'e1'));
  });

  test('a custom event shaped like GitHub\'s is about the pull request or issue it names', () => {
    expect(subjectOf('custom', 'triage', { repository: { full_name: 'o/r' }, issue: { number: 7 } }, 'e1')).toMatchObject({ kind: 'issue', number: 7, key: 'github:o/r#7' });
    expect(subjectOf('custom', 'ci', { repository: { full_name: 'o/r' }, pull_request: { number: 8, head: { sha: 'a'.repeat(40) } } }, 'e2')).toMatchObject({ kind: 'pull_request', number: 8, commit: 'a'.repeat(40) });
    expect(subjectOf('custom', 'deploy', { repository: { full_name: 'o/r' }, version: '1.2' }, 'e3')).toMatchObject({ host: 'github', key: 'event:e3' });
  });
});
