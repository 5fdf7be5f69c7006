/**
 * GitLab system hooks (`X-Gitlab-Event: System Hook`) for projects, groups, users, keys and
 * team membership carry `event_name` and no `object_kind`: they are the event `system`
 * with the action `event_name`, so `system.project_create` can be subscribed to. System
 * hooks that carry `object_kind` (push, tag_push, merge_request) keep it. Payloads are
 * GitLab's documented examples (tests/fixtures/gitlab/system/, see tests/fixtures/README.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { classifyEvent, gitlabHeaderFor } from '../../functions/core/events/classify';
import { GITLAB_EVENTS, GITLAB_SYSTEM_EVENT_NAMES, eventOrigin } from '../../functions/core/events/known';
import { subjectOf } from '../../functions/core/events/subject';
import { validateEvents } from '../../functions/core/subscriptions/validate';

const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', name), 'utf8')) as Record<string, unknown>;
const SYSTEM = { 'x-gitlab-event': 'System Hook', 'x-gitlab-event-uuid': 'uuid-1' };

describe('classifyEvent: GitLab system hooks', () => {
  test.each([
    ['project_create'], ['project_destroy'], ['project_rename'], ['user_create'], ['user_add_to_team'],
    ['user_add_to_group'], ['group_create'], ['key_create'], ['repository_update'],
  ])('event_name %s → the event system with that action', (name) => {
    expect(classifyEvent('gitlab', SYSTEM, fixture(`system/${name}.json`))).toEqual({ event: 'system', action: name, deliveryId: 'uuid-1' });
  });

  test('system hooks that carry object_kind keep it: merge_request with its action, push without one', () => {
    expect(classifyEvent('gitlab', SYSTEM, fixture('merge_request.json'))).toMatchObject({ event: 'merge_request', action: 'open' });
    expect(classifyEvent('gitlab', SYSTEM, fixture('push.json'))).toEqual({ event: 'push', deliveryId: 'uuid-1' });
    expect(classifyEvent('gitlab', SYSTEM, fixture('tag_push.json'))).toEqual({ event: 'tag_push', deliveryId: 'uuid-1' });
  });

  test("the docs' system-hook push example names its kind only in event_name: it is still a push, not system.push", () => {
    const push = fixture('system/push.json');
    expect(push.object_kind).toBeUndefined();
    expect(classifyEvent('gitlab', SYSTEM, push)).toEqual({ event: 'push', deliveryId: 'uuid-1' });
    expect(classifyEvent('gitlab', SYSTEM, { ...push, event_name: 'tag_push', ref: 'refs/tags/v1' })).toMatchObject({ event: 'tag_push' });
  });

  test('event_name counts only for system hooks: a project hook without object_kind keeps its header kind and no action', () => {
    expect(classifyEvent('gitlab', { 'x-gitlab-event': 'Push Hook' }, { event_name: 'project_create' })).toEqual({ event: 'push' });
  });

  test('bad event_name values give no action (still the event system), never a refusal', () => {
    for (const value of [undefined, '', 42, null, ['project_create'], { a: 1 }, 'has space', '../x', 'x'.repeat(101)]) {
      expect({ value, identity: classifyEvent('gitlab', SYSTEM, { event_name: value }) }).toEqual({ value, identity: { event: 'system', deliveryId: 'uuid-1' } });
    }
  });

  test('an unknown but well-formed event_name (GitLab adds them) is taken as it is', () => {
    expect(classifyEvent('gitlab', SYSTEM, { event_name: 'user_access_request_to_project', project_id: 74 })).toMatchObject({ event: 'system', action: 'user_access_request_to_project' });
  });

  test("GitLab's own header names it ('System Hook', which `webhook test --send` now sends too); another spelling or a made-up one is no event", () => {
    expect(classifyEvent('gitlab', { 'x-gitlab-event': 'System Hook' }, fixture('system/user_create.json'))).toEqual({ event: 'system', action: 'user_create' });
    expect(gitlabHeaderFor('system')).toBe('System Hook');
    expect(gitlabHeaderFor('merge_request')).toBe('Merge Request Hook');
    for (const header of ['system Hook', '__proto__', 'constructor', 'hello']) {
      expect({ header, identity: classifyEvent('gitlab', { 'x-gitlab-event': header }, fixture('system/user_create.json')) }).toEqual({ header, identity: undefined });
    }
  });

  test('object_kind still wins over event_name (an object_kind-shaped system hook)', () => {
    expect(classifyEvent('gitlab', SYSTEM, { object_kind: 'merge_request', event_name: 'project_create', object_attributes: { action: 'merge' } })).toMatchObject({ event: 'merge_request', action: 'merge' });
  });
});

describe('the known-events lists know system and its actions', () => {
  test('system is a GitLab event; every documented event_name is listed', () => {
    expect(GITLAB_EVENTS).toContain('system');
    expect(eventOrigin('system.project_create')).toBe('gitlab');
    for (const name of ['project_create', 'project_destroy', 'project_rename', 'project_transfer', 'project_update', 'repository_update', 'user_create',
      'user_destroy', 'user_failed_login', 'user_rename', 'user_add_to_team', 'user_remove_from_team', 'user_update_for_team', 'user_add_to_group',
      'user_remove_from_group', 'user_update_for_group', 'key_create', 'key_destroy', 'group_create', 'group_destroy', 'group_rename',
      'user_access_request_to_group', 'user_access_request_to_project', 'user_access_request_revoked_for_group', 'user_access_request_revoked_for_project']) {
      expect(GITLAB_SYSTEM_EVENT_NAMES).toContain(name);
    }
  });

  test('subscribe does not warn about system, system.project_create or gitlab:system.user_create', () => {
    const checked = validateEvents(['system', 'system.project_create', 'gitlab:system.user_create']);
    expect(checked.ok && checked.value.warnings).toEqual([]);
  });
});

describe('subjectOf: what a system hook is about', () => {
  test('project events are about the project (id, path kept in the key of the project)', () => {
    const created = subjectOf('gitlab', 'system', fixture('system/project_create.json'), 'e1');
    expect(created).toMatchObject({ host: 'gitlab', kind: 'other', project: '74' });
    expect(created.key).toBe('gitlab:74:system');
    expect(subjectOf('gitlab', 'system', fixture('system/user_add_to_team.json'), 'e2')).toMatchObject({ host: 'gitlab', project: '74', key: 'gitlab:74:system' });
    expect(subjectOf('gitlab', 'system', fixture('system/repository_update.json'), 'e3')).toMatchObject({ host: 'gitlab', project: '1', key: 'gitlab:1:system' });
  });

  test('a project event without a usable id falls back to its path', () => {
    const { project_id: _id, ...byPath } = fixture('system/project_rename.json');
    expect(subjectOf('gitlab', 'system', byPath, 'e1')).toMatchObject({ host: 'gitlab', project: 'jsmith/underscore', key: 'gitlab:jsmith/underscore:system' });
    const { project_id: _id2, ...member } = fixture('system/user_add_to_team.json');
    expect(subjectOf('gitlab', 'system', member, 'e1')).toMatchObject({ project: 'jsmith/storecloud' });
  });

  test('group, user and key events name no project (so no host a code-host tool would try): a group key, a user key, else the event itself', () => {
    expect(subjectOf('gitlab', 'system', fixture('system/group_create.json'), 'e1')).toEqual({ kind: 'other', key: 'gitlab:group:78' });
    expect(subjectOf('gitlab', 'system', fixture('system/user_add_to_group.json'), 'e1')).toEqual({ kind: 'other', key: 'gitlab:group:78' });
    expect(subjectOf('gitlab', 'system', fixture('system/user_create.json'), 'e1')).toEqual({ kind: 'other', key: 'gitlab:user:41' });
    expect(subjectOf('gitlab', 'system', fixture('system/key_create.json'), 'e9')).toEqual({ kind: 'other', key: 'event:e9' });
  });

  test('the system-hook push and merge request keep their usual subjects', () => {
    expect(subjectOf('gitlab', 'push', fixture('system/push.json'), 'e1')).toMatchObject({ kind: 'commit', commit: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7', project: '15' });
    expect(subjectOf('gitlab', 'merge_request', fixture('merge_request.json'), 'e1')).toMatchObject({ kind: 'merge_request' });
  });

  test('hostile values give no subject part', () => {
    expect(subjectOf('gitlab', 'system', { event_name: 'project_create', project_id: '../1', path_with_namespace: '../../etc' }, 'e1')).toEqual({ kind: 'other', key: 'event:e1' });
    expect(subjectOf('gitlab', 'system', { event_name: 'group_create', group_id: -1 }, 'e1')).toEqual({ kind: 'other', key: 'event:e1' });
  });
});
