/**
 * Hunt 9 D1: `subscribe` judges the actions of GitLab's milestone, emoji, group member,
 * project, subgroup and access token hooks (README "Actions are checked at
 * `subscribe`/`update`"): documented actions pass without a word, near misses are refused
 * with the right filter, other unknown actions are warnings.
 */
import { validateEvents } from '../../functions/core/subscriptions/validate';

const verdict = (events: string[]) => {
  const result = validateEvents(events);
  return result.ok ? { warnings: result.value.warnings } : { error: result.error.message };
};

test('the documented actions are accepted without a warning', () => {
  const events = [
    'gitlab:milestone.create', 'gitlab:milestone.close', 'gitlab:milestone.reopen', 'gitlab:milestone.delete',
    'gitlab:emoji.award', 'gitlab:emoji.revoke',
    'gitlab:member.user_add_to_group', 'gitlab:member.user_update_for_group', 'gitlab:member.user_remove_from_group',
    'gitlab:member.user_access_request_to_group', 'gitlab:member.user_access_request_denied_for_group',
    'gitlab:project.project_create', 'gitlab:project.project_destroy',
    'gitlab:subgroup.subgroup_create', 'gitlab:subgroup.subgroup_destroy',
    'gitlab:access_token.expiring_access_token',
    'gitlab:milestone', 'gitlab:member', 'gitlab:emoji',
  ];
  expect(verdict(events)).toEqual({ warnings: [] });
});

test.each([
  ['gitlab:milestone.closed', "GitLab sends milestone actions create, close, reopen, delete. Did you mean 'gitlab:milestone.close'?"],
  ['gitlab:milestone.created', "Did you mean 'gitlab:milestone.create'?"],
  ['gitlab:emoji.awarded', "GitLab sends emoji actions award, revoke. Did you mean 'gitlab:emoji.award'?"],
  ['gitlab:member.user_add_to_groups', "Did you mean 'gitlab:member.user_add_to_group'?"],
  ['gitlab:project.project_created', "Did you mean 'gitlab:project.project_create'?"],
  ['gitlab:subgroup.subgroup_destroyed', "Did you mean 'gitlab:subgroup.subgroup_destroy'?"],
  ['gitlab:access_token.expiring_access_tokens', "Did you mean 'gitlab:access_token.expiring_access_token'?"],
])('%s is refused', (event, message) => {
  expect(verdict([event]).error).toContain(`'${event}' would never match`);
  expect(verdict([event]).error).toContain(message);
});

test('an action far from every known one is a warning (GitLab may have added it)', () => {
  expect(verdict(['gitlab:milestone.update'])).toEqual({ warnings: [expect.stringContaining("'gitlab:milestone.update' may never match: GitLab sends milestone actions create, close, reopen, delete")] });
  // A system hook's name on a group member hook: GitLab's member hooks say user_add_to_group.
  expect(verdict(['gitlab:member.user_add_to_team'])).toEqual({ warnings: [expect.stringContaining("'gitlab:member.user_add_to_team' may never match")] });
});

test('an unqualified filter on a name both hosts send passes when either host sends the action', () => {
  // GitHub: milestone closed/created, member added, project created; GitLab: its own spellings.
  expect(verdict(['milestone.closed', 'milestone.close', 'member.added', 'member.user_add_to_group', 'project.created', 'project.project_create'])).toEqual({ warnings: [] });
  // Neither host sends milestone.open (GitHub: opened; GitLab: create).
  expect(verdict(['milestone.open']).error).toContain("Did you mean 'milestone.opened'?");
});
