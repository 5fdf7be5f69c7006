/**
 * Hunt 9 D1: where each GitLab hook carries its action, as classifyEvent reads it.
 *
 * - `object_attributes.action`: merge requests, issues, comments, wiki pages.
 * - The top-level `action`: releases and milestones (milestone `object_attributes` has none).
 * - `event_name`: hooks without `object_kind` (system, group member, project, subgroup) and access tokens.
 * - `event_type`: emoji hooks (`award`, `revoke`).
 *
 * A field that only repeats the event's name (`event_type: issue`, `event_name: push`) is no
 * action. Payloads: GitLab's documented examples (tests/fixtures/gitlab/, group/), and the
 * group milestone close of GitLab MR !197320.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { classifyEvent } from '../../functions/core/events/classify';
import { subjectOf } from '../../functions/core/events/subject';
import { actionsFor } from '../../functions/core/subscriptions/event-actions';

type Payload = Record<string, unknown>;
const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', name), 'utf8')) as Payload;
const hook = (header: string) => ({ 'x-gitlab-event': header, 'x-gitlab-event-uuid': 'uuid-1' });

/** An emoji hook as GitLab builds it (Gitlab::HookData::EmojiBuilder has no action; the docs' example shows one). */
function emojiAsBuilt(eventType: string): Payload {
  const { object_attributes: attributes, ...rest } = fixture('emoji.json') as { object_attributes: Payload };
  const { action: _action, ...withoutAction } = attributes;
  return { ...rest, event_type: eventType, object_attributes: withoutAction };
}

/** [fixture, X-Gitlab-Event, event, action] */
const DOCUMENTED: Array<[string, string, string, string | undefined]> = [
  ['milestone.json', 'Milestone Hook', 'milestone', 'create'],
  ['milestone_group_close.json', 'Milestone Hook', 'milestone', 'close'],
  ['group/user_add_to_group.json', 'Member Hook', 'member', 'user_add_to_group'],
  ['group/user_update_for_group.json', 'Member Hook', 'member', 'user_update_for_group'],
  ['group/user_remove_from_group.json', 'Member Hook', 'member', 'user_remove_from_group'],
  ['group/user_access_request_to_group.json', 'Member Hook', 'member', 'user_access_request_to_group'],
  ['group/user_access_request_denied_for_group.json', 'Member Hook', 'member', 'user_access_request_denied_for_group'],
  ['group/project_create.json', 'Project Hook', 'project', 'project_create'],
  ['group/project_destroy.json', 'Project Hook', 'project', 'project_destroy'],
  ['group/subgroup_create.json', 'Subgroup Hook', 'subgroup', 'subgroup_create'],
  ['group/subgroup_destroy.json', 'Subgroup Hook', 'subgroup', 'subgroup_destroy'],
  ['emoji.json', 'Emoji Hook', 'emoji', 'award'],
  // The hooks read before: unchanged.
  ['merge_request.json', 'Merge Request Hook', 'merge_request', 'open'],
  ['issue.json', 'Issue Hook', 'issue', 'open'],
  ['note_merge_request.json', 'Note Hook', 'note', 'create'],
  ['release.json', 'Release Hook', 'release', 'create'],
  ['push.json', 'Push Hook', 'push', undefined],
  ['tag_push.json', 'Tag Push Hook', 'tag_push', undefined],
  ['pipeline.json', 'Pipeline Hook', 'pipeline', undefined],
];

describe('classifyEvent: the action wherever the GitLab hook carries it', () => {
  test.each(DOCUMENTED)('%s (%s) → %s.%s', (name, header, event, action) => {
    expect(classifyEvent('gitlab', hook(header), fixture(name))).toEqual({ event, ...(action ? { action } : {}), deliveryId: 'uuid-1' });
  });

  test('every action read from the documented payloads is one subscribe knows, so filters on it are accepted', () => {
    for (const [name, header, event, action] of DOCUMENTED) {
      expect({ name, known: actionsFor('gitlab', event)?.includes(action ?? '') ?? false }).toEqual({ name, known: action !== undefined });
    }
  });

  test('emoji hooks as GitLab builds them name the action only in event_type: award and revoke', () => {
    expect(classifyEvent('gitlab', hook('Emoji Hook'), emojiAsBuilt('award'))).toMatchObject({ event: 'emoji', action: 'award' });
    expect(classifyEvent('gitlab', hook('Emoji Hook'), emojiAsBuilt('revoke'))).toMatchObject({ event: 'emoji', action: 'revoke' });
  });

  test("an access token hook's event_name is its action", () => {
    const token = { object_kind: 'access_token', object_attributes: { user_id: 90, id: 25, name: 'acd', expires_at: '2024-01-26' }, event_name: 'expiring_access_token' };
    expect(classifyEvent('gitlab', hook('Resource Access Token Hook'), token)).toMatchObject({ event: 'access_token', action: 'expiring_access_token' });
  });

  test('a field that only repeats the event name is no action: event_type issue, confidential_note, milestone; event_name push', () => {
    const { action: _action, ...noAction } = fixture('issue.json').object_attributes as Payload;
    const issue = { ...fixture('issue.json'), object_attributes: noAction };
    expect(classifyEvent('gitlab', hook('Issue Hook'), issue)).toEqual({ event: 'issue', deliveryId: 'uuid-1' });
    expect(classifyEvent('gitlab', hook('Confidential Issue Hook'), { ...issue, event_type: 'confidential_issue' })).toEqual({ event: 'issue', deliveryId: 'uuid-1' });
    // A comment from GitLab before 16.11, which had no object_attributes.action.
    expect(classifyEvent('gitlab', hook('Confidential Note Hook'), { object_kind: 'note', event_type: 'confidential_note', object_attributes: { id: 1 } })).toEqual({ event: 'note', deliveryId: 'uuid-1' });
    const { action: _milestoneAction, ...milestone } = fixture('milestone.json');
    expect(classifyEvent('gitlab', hook('Milestone Hook'), milestone)).toEqual({ event: 'milestone', deliveryId: 'uuid-1' });
    expect(classifyEvent('gitlab', hook('Push Hook'), { ...fixture('push.json'), event_type: 'push' })).toEqual({ event: 'push', deliveryId: 'uuid-1' });
  });

  test('object_attributes.action comes first, then the top-level action, event_name, event_type', () => {
    const all = { object_kind: 'merge_request', object_attributes: { action: 'merge' }, action: 'close', event_name: 'project_create', event_type: 'award' };
    expect(classifyEvent('gitlab', {}, all)).toMatchObject({ action: 'merge' });
    expect(classifyEvent('gitlab', {}, { ...all, object_attributes: {} })).toMatchObject({ action: 'close' });
    expect(classifyEvent('gitlab', {}, { ...all, object_attributes: {}, action: '' })).toMatchObject({ action: 'project_create' });
    expect(classifyEvent('gitlab', {}, { object_kind: 'emoji', object_attributes: {}, event_type: 'award' })).toMatchObject({ action: 'award' });
  });

  test('bad action values give no action, never a refusal', () => {
    for (const value of [undefined, '', 42, null, ['close'], { a: 1 }, 'has space', '../x', 'x'.repeat(101)]) {
      const milestone = { ...fixture('milestone.json'), action: value };
      expect({ value, identity: classifyEvent('gitlab', hook('Milestone Hook'), milestone) }).toEqual({ value, identity: { event: 'milestone', deliveryId: 'uuid-1' } });
      const member = { ...fixture('group/user_add_to_group.json'), event_name: value };
      expect({ value, identity: classifyEvent('gitlab', hook('Member Hook'), member) }).toEqual({ value, identity: { event: 'member', deliveryId: 'uuid-1' } });
    }
  });
});

describe('subjectOf: these hooks keep the subjects they had (debounce keys, sticky comments)', () => {
  test('a milestone, project or emoji hook is its own subject, on its project when it names one', () => {
    expect(subjectOf('gitlab', 'milestone', fixture('milestone.json'), 'e1')).toEqual({ host: 'gitlab', kind: 'other', project: '1', key: 'event:e1' });
    expect(subjectOf('gitlab', 'project', fixture('group/project_create.json'), 'e2')).toEqual({ host: 'gitlab', kind: 'other', project: '22', key: 'event:e2' });
    expect(subjectOf('gitlab', 'emoji', fixture('emoji.json'), 'e3')).toEqual({ host: 'gitlab', kind: 'other', project: '6', key: 'event:e3' });
  });

  test('a group milestone, member or subgroup hook names no project: its own subject, with no code host', () => {
    expect(subjectOf('gitlab', 'milestone', fixture('milestone_group_close.json'), 'e1')).toEqual({ kind: 'other', key: 'event:e1' });
    expect(subjectOf('gitlab', 'member', fixture('group/user_add_to_group.json'), 'e2')).toEqual({ kind: 'other', key: 'event:e2' });
    expect(subjectOf('gitlab', 'subgroup', fixture('group/subgroup_create.json'), 'e3')).toEqual({ kind: 'other', key: 'event:e3' });
  });
});
