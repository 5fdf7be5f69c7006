/**
 * The one answer to "what is this event about?" (like Probot's `context.issue()`):
 * (source, event, payload) → code host, repository or project, pull/merge request or
 * issue number, commit, and a stable subject key. Every part is validated here, so the
 * modules that build API URLs from it (delivery, agent tools) never put raw payload text
 * into a path: a value that breaks the rules yields no subject part at all.
 */
import { createHash } from 'node:crypto';
import type { Source } from '../types';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/** A positive integer (JSON number or decimal string) as GitHub and GitLab number things. */
export function positiveInt(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^[1-9][0-9]{0,15}$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** A commit id: 7-40 (SHA-1) or 64 (SHA-256) hex digits, never the all-zero "no commit". */
export function commitSha(v: unknown): string | undefined {
  return typeof v === 'string' && /^(?:[0-9a-f]{7,40}|[0-9a-f]{64})$/.test(v) && !/^0+$/.test(v) ? v : undefined;
}

/** GitHub's rules: owner 1-39 of [A-Za-z0-9-], not starting with '-'; repository 1-100 of [A-Za-z0-9._-], not '.' or '..'. */
export function githubRepo(fullName: unknown): { owner: string; name: string } | undefined {
  if (typeof fullName !== 'string') return undefined;
  const match = /^([A-Za-z0-9][A-Za-z0-9-]{0,38})\/([A-Za-z0-9._-]{1,100})$/.exec(fullName);
  if (!match || match[2] === '.' || match[2] === '..') return undefined;
  return { owner: match[1] as string, name: match[2] as string };
}

/** A GitLab project: its numeric id, or its `namespace/…/project` path (percent-encoded when put into a URL). */
export function gitlabProject(v: unknown): string | undefined {
  const id = positiveInt(v);
  if (id !== undefined) return String(id);
  if (typeof v !== 'string') return undefined;
  const segments = v.split('/');
  const segment = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$/;
  return segments.length >= 2 && segments.every((s) => segment.test(s) && s !== '.' && s !== '..' && !s.endsWith('.git')) ? v : undefined;
}

export type SubjectKind = 'pull_request' | 'merge_request' | 'issue' | 'commit' | 'alert' | 'other';

export interface Subject {
  /** The code host the event is about (a custom event shaped like a GitHub/GitLab payload counts too). */
  host?: 'github' | 'gitlab';
  kind: SubjectKind;
  /** GitHub repository. */
  repo?: { owner: string; name: string };
  /** GitLab project id or path. */
  project?: string;
  /** Pull request / issue number (GitHub), merge request / issue iid (GitLab). */
  number?: number;
  /** The commit the event is about: a PR/MR head, a pushed commit, a pipeline's sha. */
  commit?: string;
  /** Stable key of the subject, for debounce and sticky comments: same PR → same key. */
  key: string;
}

/** `/repos/{owner}/{repo}` with each part encoded: the only way a GitHub path is started. */
export function githubRepoPath(repo: { owner: string; name: string }): string {
  return `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.name)}`;
}

/** `/projects/{id}`, the path form percent-encoded as GitLab's API wants it. */
export function gitlabProjectPath(project: string): string {
  return `/projects/${encodeURIComponent(project)}`;
}

const hashKey = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

function githubRepoOf(p: Obj): Pick<Subject, 'host' | 'repo'> | undefined {
  const repo = githubRepo(obj(p.repository)?.full_name);
  return repo && { host: 'github', repo };
}

function gitlabProjectOf(p: Obj): Pick<Subject, 'host' | 'project'> | undefined {
  const project = gitlabProject(obj(p.project)?.id) ?? gitlabProject(p.project_id) ?? gitlabProject(obj(p.project)?.path_with_namespace);
  return project === undefined ? undefined : { host: 'gitlab', project };
}

function githubSubject(event: string, p: Obj): Subject | undefined {
  const found = githubRepoOf(p);
  if (!found) return undefined;
  const repo = found.repo as NonNullable<Subject['repo']>;
  const base = { host: 'github' as const, repo };
  const pr = obj(p.pull_request);
  const issue = obj(p.issue);
  const firstPr = (list: unknown) => positiveInt(obj(Array.isArray(list) ? list[0] : undefined)?.number);
  const repoKey = `github:${repo.owner}/${repo.name}`.toLowerCase();
  const numbered = (kind: 'pull_request' | 'issue', number: number | undefined, commit?: string): Subject | undefined =>
    number === undefined ? undefined : { ...base, kind, number, ...(commit ? { commit } : {}), key: `${repoKey}#${number}` };
  const atCommit = (commit: string | undefined): Subject | undefined => (commit ? { ...base, kind: 'commit', commit, key: `${repoKey}@${commit}` } : undefined);
  switch (event) {
    case 'pull_request': case 'pull_request_review': case 'pull_request_review_comment': case 'pull_request_review_thread':
      return numbered('pull_request', positiveInt(pr?.number), commitSha(obj(pr?.head)?.sha));
    case 'issues': case 'issue_comment':
      return numbered(obj(issue?.pull_request) ? 'pull_request' : 'issue', positiveInt(issue?.number));
    case 'push':
      return atCommit(commitSha(p.after) ?? commitSha(obj(p.head_commit)?.id));
    case 'commit_comment':
      return atCommit(commitSha(obj(p.comment)?.commit_id));
    case 'status':
      return atCommit(commitSha(p.sha));
    case 'check_run': case 'check_suite': case 'workflow_run': {
      const run = obj(p[event]);
      const head = commitSha(run?.head_sha);
      return numbered('pull_request', firstPr(run?.pull_requests), head) ?? atCommit(head);
    }
    case 'workflow_job':
      return atCommit(commitSha(obj(p.workflow_job)?.head_sha));
    case 'deployment': case 'deployment_status':
      return atCommit(commitSha(obj(p.deployment)?.sha));
    case 'discussion': case 'discussion_comment': {
      // No place a comment can go (discussions are GraphQL-only), but one subject per discussion.
      const number = positiveInt(obj(p.discussion)?.number);
      return number === undefined ? undefined : { ...base, kind: 'other', key: `${repoKey}:discussion#${number}` };
    }
    default:
      // An event the cases above do not know (a custom event shaped like GitHub's, a newer
      // GitHub event) is about the pull request or issue it names. Else it has no subject, not
      // one per repository: two releases are different things, and debounce would keep only
      // the last (hunt 9).
      return numbered('pull_request', positiveInt(pr?.number), commitSha(obj(pr?.head)?.sha))
        ?? numbered(obj(issue?.pull_request) ? 'pull_request' : 'issue', positiveInt(issue?.number));
  }
}

/**
 * A GitLab system hook without `object_kind` (`project_create`, `user_add_to_team`, …):
 * about its project when it names one (the id, stable across renames and transfers, else
 * the path); a group's or a user's events share a key per group or user, with no host,
 * since no code-host request can be scoped to them.
 */
function gitlabSystemSubject(p: Obj): Subject | undefined {
  const project = gitlabProjectOf(p)?.project ?? gitlabProject(p.path_with_namespace) ?? gitlabProject(p.project_path_with_namespace);
  if (project) return { host: 'gitlab', kind: 'other', project, key: `gitlab:${project}:system`.toLowerCase() };
  const group = positiveInt(p.group_id);
  if (group !== undefined) return { kind: 'other', key: `gitlab:group:${group}` };
  const user = positiveInt(p.user_id);
  return user === undefined ? undefined : { kind: 'other', key: `gitlab:user:${user}` };
}

/** `kind`: the payload's object_kind, else the event classify.ts gave it (a system hook's push names its kind only in event_name). */
function gitlabSubject(p: Obj, kind: string): Subject | undefined {
  if (kind === 'system') return gitlabSystemSubject(p);
  const project = gitlabProjectOf(p)?.project;
  if (!project) return undefined;
  const base = { host: 'gitlab' as const, project };
  const attributes = obj(p.object_attributes);
  const projectKey = `gitlab:${project}`.toLowerCase();
  const mr = (iid: number | undefined, commit?: string): Subject | undefined =>
    iid === undefined ? undefined : { ...base, kind: 'merge_request', number: iid, ...(commit ? { commit } : {}), key: `${projectKey}!${iid}` };
  const issue = (iid: number | undefined): Subject | undefined => (iid === undefined ? undefined : { ...base, kind: 'issue', number: iid, key: `${projectKey}#${iid}` });
  const atCommit = (commit: string | undefined): Subject | undefined => (commit ? { ...base, kind: 'commit', commit, key: `${projectKey}@${commit}` } : undefined);
  switch (kind) {
    case 'merge_request':
      return mr(positiveInt(attributes?.iid), commitSha(obj(attributes?.last_commit)?.id));
    case 'issue': case 'work_item':
      return issue(positiveInt(attributes?.iid));
    case 'note': {
      const type = attributes?.noteable_type;
      if (type === 'MergeRequest') return mr(positiveInt(obj(p.merge_request)?.iid), commitSha(obj(obj(p.merge_request)?.last_commit)?.id));
      if (type === 'Issue') return issue(positiveInt(obj(p.issue)?.iid));
      if (type === 'Commit') return atCommit(commitSha(obj(p.commit)?.id) ?? commitSha(attributes?.commit_id));
      return undefined;
    }
    case 'push': case 'tag_push':
      return atCommit(commitSha(p.checkout_sha) ?? commitSha(p.after));
    case 'pipeline': {
      // A fork's merge request pipeline runs in the fork (its source project), while the iid is
      // the merge request's in its target project: the merge request is the target's.
      const request = obj(p.merge_request);
      const target = gitlabProject(request?.target_project_id);
      const sha = commitSha(attributes?.sha);
      const iid = positiveInt(request?.iid);
      if (target !== undefined && target !== project && iid !== undefined) {
        return { host: 'gitlab', project: target, kind: 'merge_request', number: iid, ...(sha ? { commit: sha } : {}), key: `gitlab:${target}!${iid}`.toLowerCase() };
      }
      return mr(iid, sha) ?? atCommit(sha);
    }
    case 'build':
      // A Job Hook: the commit its pipeline ran on.
      return atCommit(commitSha(p.sha) ?? commitSha(obj(p.commit)?.sha));
    default:
      // Not one subject per project (see githubSubject): a release, a wiki page, a deployment
      // the cases above do not read is its own event.
      return undefined;
  }
}

/**
 * Alertmanager / Grafana group keys and PagerDuty incidents: one subject per alert group.
 * A groupKey (route key + group labels) is unique only within the Alertmanager or Grafana org
 * that formed it: the sender's externalURL (and Grafana's orgId) are part of the subject, so
 * prod's and staging's `{}:{alertname="DiskRunningFull"}` never supersede each other, while
 * HA replicas, which share their externalURL, still merge.
 */
function alertSubject(p: Obj): Subject | undefined {
  const group = str(p.groupKey);
  const org = typeof p.orgId === 'number' || typeof p.orgId === 'string' ? p.orgId : '';
  if (group) return { kind: 'alert', key: `alert:${hashKey(JSON.stringify([str(p.externalURL) ?? '', org, group]))}` };
  const incident = obj(obj(p.event)?.data);
  const id = str(incident?.id);
  if (id && str(obj(p.event)?.event_type)?.startsWith('incident.')) return { kind: 'alert', key: `pagerduty:${hashKey(id)}` };
  return undefined;
}

/**
 * What an event is about. GitHub and GitLab endpoints use their own shapes; a custom
 * event is read as GitLab's when it has `object_kind`, as GitHub's when it names a
 * repository, else as an alert group. Without any subject (an event that names no pull/merge
 * request, issue, commit, discussion or alert group: a release, a wiki page), the key is the
 * event itself (`event:<id>`), so nothing unrelated is ever merged by debounce.
 */
export function subjectOf(source: Source, event: string, payload: Obj, eventId: string): Subject {
  let found: Subject | undefined;
  // A valid repository or project whose event names no PR, issue or commit (a deleted branch's
  // push) is still that host's: a comment then says it has no place, not that there is no repository.
  const placeless = (subject: Pick<Subject, 'host' | 'repo' | 'project'> | undefined): Subject | undefined => subject && { ...subject, kind: 'other', key: `event:${eventId}` };
  if (source === 'gitlab' || (source === 'custom' && typeof payload.object_kind === 'string')) {
    const kind = typeof payload.object_kind === 'string' ? payload.object_kind : source === 'gitlab' ? event : '';
    found = gitlabSubject(payload, kind) ?? placeless(gitlabProjectOf(payload));
  } else if (source === 'github' || (source === 'custom' && obj(payload.repository)?.full_name !== undefined)) {
    found = githubSubject(event, payload) ?? placeless(githubRepoOf(payload));
  }
  if (!found && source === 'custom') found = alertSubject(payload);
  return found ?? { kind: 'other', key: `event:${eventId}` };
}
