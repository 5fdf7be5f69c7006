/** Event names GitHub and GitLab send; other names are accepted (custom senders) with a warning. */
export const GITHUB_EVENTS = [
  'branch_protection_configuration', 'branch_protection_rule', 'check_run', 'check_suite', 'code_scanning_alert', 'commit_comment',
  'create', 'custom_property', 'custom_property_values', 'delete', 'dependabot_alert', 'deploy_key', 'deployment',
  'deployment_protection_rule', 'deployment_review', 'deployment_status', 'discussion', 'discussion_comment', 'fork',
  'github_app_authorization', 'gollum', 'installation', 'installation_repositories', 'installation_target', 'issue_comment',
  'issues', 'label', 'marketplace_purchase', 'member', 'membership', 'merge_group', 'meta', 'milestone', 'org_block',
  'organization', 'package', 'page_build', 'personal_access_token_request', 'ping', 'project', 'project_card', 'project_column',
  'projects_v2', 'projects_v2_item', 'public', 'pull_request', 'pull_request_review', 'pull_request_review_comment',
  'pull_request_review_thread', 'push', 'registry_package', 'release', 'repository', 'repository_advisory', 'repository_dispatch',
  'repository_import', 'repository_ruleset', 'repository_vulnerability_alert', 'secret_scanning_alert',
  'secret_scanning_alert_location', 'security_advisory', 'security_and_analysis', 'sponsorship', 'star', 'status', 'team',
  'team_add', 'watch', 'workflow_dispatch', 'workflow_job', 'workflow_run',
] as const;

export const GITLAB_EVENTS = [
  'push', 'tag_push', 'issue', 'work_item', 'note', 'merge_request', 'wiki_page', 'pipeline', 'build', 'deployment',
  'feature_flag', 'release', 'emoji', 'member', 'project', 'subgroup', 'access_token', 'vulnerability', 'milestone',
  'system',
] as const;

/**
 * The actions of GitLab's `system` event: the `event_name` of system hooks without
 * `object_kind` (GitLab's "System hooks" docs), as classify.ts reads them.
 */
export const GITLAB_SYSTEM_EVENT_NAMES = [
  'group_create', 'group_destroy', 'group_rename', 'key_create', 'key_destroy',
  'project_create', 'project_destroy', 'project_rename', 'project_transfer', 'project_update', 'repository_update',
  'user_access_request_revoked_for_group', 'user_access_request_revoked_for_project', 'user_access_request_to_group',
  'user_access_request_to_project', 'user_add_to_group', 'user_add_to_team', 'user_create', 'user_destroy',
  'user_failed_login', 'user_remove_from_group', 'user_remove_from_team', 'user_rename', 'user_update_for_group',
  'user_update_for_team',
] as const;

/**
 * GitHub's `ping` (sent when a hook is set up) is answered `200 {"status":"ok"}` before any
 * routing (ingest/service.ts): it reaches no subscription, and no other endpoint's answer does so.
 */
export const GITHUB_UNROUTED_EVENT = 'ping';

const GITHUB = new Set<string>(GITHUB_EVENTS);
const GITLAB = new Set<string>(GITLAB_EVENTS);

export type EventOrigin = 'github' | 'gitlab' | 'both' | 'unknown';

/** Which code host sends an event name (`pull_request.opened` judged by `pull_request`). */
export function eventOrigin(filter: string): EventOrigin {
  const name = filter.split('.')[0] ?? filter;
  const gh = GITHUB.has(name);
  const gl = GITLAB.has(name);
  return gh && gl ? 'both' : gh ? 'github' : gl ? 'gitlab' : 'unknown';
}
