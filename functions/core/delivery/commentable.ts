/**
 * Which events `codehost_comment` can answer: those whose payload names a pull/merge
 * request, an issue or a commit. `subscribe` refuses the others; the delivery targets
 * find the exact place from the payload.
 */
export const GITHUB_COMMENTABLE = [
  'pull_request', 'pull_request_review', 'pull_request_review_comment', 'pull_request_review_thread',
  'issues', 'issue_comment', 'push', 'commit_comment', 'status', 'check_run', 'check_suite', 'workflow_run',
  'workflow_job', 'deployment', 'deployment_status',
] as const;

/** `build`: a Job Hook, about the commit its pipeline ran on (events/subject.ts). */
export const GITLAB_COMMENTABLE = ['merge_request', 'issue', 'note', 'push', 'tag_push', 'pipeline', 'build', 'work_item'] as const;

const COMMENTABLE = new Set<string>([...GITHUB_COMMENTABLE, ...GITLAB_COMMENTABLE]);

/** `pull_request.opened` is judged by its event name. */
export function isCommentable(filter: string): boolean {
  return COMMENTABLE.has(filter.split('.')[0] ?? filter);
}
