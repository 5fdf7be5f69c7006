/**
 * `subscribe`'s check of a `name.action` event filter against the actions the code hosts
 * send: `gitlab:merge_request.opened` (GitLab sends `open`), `pull_request.open` (GitHub
 * sends `opened`) or `push.created` (push carries no action) would never match.
 *
 * - A near miss of a known action (`open`/`opened`, one typo) is refused with the right one.
 * - An event that carries no action, given one, is refused.
 * - Any other unknown action is a warning: the host may have added it after these lists.
 *
 * CLI side only (validate.ts): the Lambda bundles never load these lists.
 */
import { GITLAB_SYSTEM_EVENT_NAMES } from '../events/known';
import { distance } from '../suggest';
import type { Source } from '../types';
import { GITHUB_ACTIONS } from './github-actions.generated';

export type CodeHost = 'github' | 'gitlab';

const ISSUE_ACTIONS = ['open', 'close', 'reopen', 'update'] as const;

/**
 * GitLab's action per object_kind (GitLab's webhook docs), as hookagent reads it
 * (events/classify.ts): `object_attributes.action`, else the top-level `action` (release,
 * milestone), else `event_name` (system, member, project, subgroup, access_token), else
 * `event_type` (emoji). [] = these events carry none. Kinds not listed are not checked.
 */
const GITLAB_ACTIONS: Readonly<Record<string, readonly string[]>> = {
  merge_request: ['open', 'close', 'reopen', 'update', 'approved', 'unapproved', 'approval', 'unapproval', 'merge'],
  issue: ISSUE_ACTIONS, work_item: ISSUE_ACTIONS,
  note: ['create', 'update'],
  wiki_page: ['create', 'update', 'delete'],
  release: ['create', 'update', 'delete'],
  milestone: ['create', 'close', 'reopen', 'delete'],
  emoji: ['award', 'revoke'],
  push: [], tag_push: [], pipeline: [], build: [], deployment: [],
  // event_name is the action: hooks without object_kind (system, group hooks), and access tokens.
  system: GITLAB_SYSTEM_EVENT_NAMES,
  member: ['user_add_to_group', 'user_update_for_group', 'user_remove_from_group', 'user_access_request_to_group', 'user_access_request_denied_for_group'],
  project: ['project_create', 'project_destroy'],
  subgroup: ['subgroup_create', 'subgroup_destroy'],
  access_token: ['expiring_access_token'],
};

/** The same thing under the other host's name, for a hint. */
const COUNTERPARTS: Record<CodeHost, Record<string, string>> = {
  github: { issues: 'issue', pull_request: 'merge_request' },
  gitlab: { issue: 'issues', merge_request: 'pull_request' },
};

const HOST_NAME: Record<CodeHost, string> = { github: 'GitHub', gitlab: 'GitLab' };

export const actionsFor = (host: CodeHost, event: string): readonly string[] | undefined =>
  (host === 'github' ? GITHUB_ACTIONS : GITLAB_ACTIONS)[event];

/** Names GitHub sends per @octokit/webhooks, some newer than events/known.ts's list. */
export const githubEventNames = (): string[] => Object.keys(GITHUB_ACTIONS);

/** `open`/`opened`, `close`/`closed`, `merge`/`merged`: one host's spelling of the other's. */
const sameStem = (a: string, b: string): boolean => a === `${b}ed` || a === `${b}d` || b === `${a}ed` || b === `${a}d`;

export interface ActionVerdict {
  error?: string;
  warning?: string;
}

/**
 * The verdict on `name.action` for the hosts that send `name` (from the filter's source, or
 * every host that knows the name); undefined when it may match or cannot be judged.
 */
export function checkAction(source: Source | undefined, name: string, action: string, hosts: readonly CodeHost[]): ActionVerdict | undefined {
  const lists = hosts.map((host) => ({ host, actions: actionsFor(host, name) }));
  if (lists.length === 0 || lists.some((l) => l.actions === undefined || l.actions.includes(action))) return undefined;
  const prefix = source ? `${source}:` : '';
  const filter = `${prefix}${name}.${action}`;
  const silent = lists.filter((l) => l.actions?.length === 0).map((l) => HOST_NAME[l.host]);
  const said = [
    ...lists.filter((l) => l.actions?.length).map(({ host, actions = [] }) => `${HOST_NAME[host]} sends ${name} actions ${actions.join(', ')}`),
    ...(silent.length > 0 ? [`${silent.join(' and ')} ${name} events carry no action`] : []),
  ].join('; ');
  // A custom sender may use any name: an unqualified filter can still be meant for one.
  const custom = source === undefined ? ` (for a custom sender's event, use 'custom:${name}.${action}')` : '';
  const known = lists.flatMap(({ actions = [] }) => actions);
  if (known.length === 0) return { error: `'${filter}' would never match: ${said}. Use '${prefix}${name}'${custom}` };
  const near = known.find((a) => sameStem(action.toLowerCase(), a)) ?? known.find((a) => distance(action.toLowerCase(), a) <= 1);
  if (near === undefined) {
    return { warning: `'${filter}' may never match: ${said} (if the host added '${action}' recently, ignore this)` };
  }
  const hint = counterpartHint(lists.map((l) => l.host), name, action);
  return { error: `'${filter}' would never match: ${said}. Did you mean '${prefix}${name}.${near}'? Use that instead${hint}${custom}` };
}

/** `issue.opened`: GitHub's issue event is `issues`, where `opened` is an action. */
function counterpartHint(hosts: readonly CodeHost[], name: string, action: string): string {
  for (const host of hosts) {
    const other: CodeHost = host === 'github' ? 'gitlab' : 'github';
    const twin = COUNTERPARTS[host][name];
    if (twin && actionsFor(other, twin)?.includes(action)) return ` (${HOST_NAME[other]}'s is '${other}:${twin}.${action}')`;
  }
  return '';
}
