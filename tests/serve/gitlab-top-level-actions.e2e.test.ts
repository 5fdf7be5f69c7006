/**
 * Hunt 9 D1: GitLab hooks whose action is not in `object_attributes.action`, through
 * `hookagent serve` over real HTTP on 127.0.0.1.
 *
 * - Milestone hooks carry it at the top level (`action`: create, close, reopen, delete).
 * - Group member, project and subgroup hooks have no `object_kind` and name it in `event_name`.
 * - Emoji hooks name it in `event_type` (award, revoke).
 *
 * `subscribe` used to accept `gitlab:milestone.close` and `gitlab:member.user_add_to_group`
 * without a word, and the events were then answered 200 "Event not handled". Now they reach
 * their subscriptions, other actions of the same hooks do not, and near misses are refused.
 * Payloads: GitLab's documented examples (tests/fixtures/gitlab/), and the group milestone
 * close of GitLab MR !197320.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../support/serve';
import { useServeWithTelegram } from '../support/serve-telegram';

const GL_SECRET = 'top-level-actions-gitlab-token';
const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', name), 'utf8');
const h = useServeWithTelegram({ prefix: 'hookagent-gl-actions-', webhooks: '{ gitlab: { secret: ${GL_SECRET} } }', env: { GL_SECRET } });

let n = 0;
async function gitlab(hook: string, body: string) {
  const response = await fetch(`${h.serve.url}/webhooks/gitlab`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'x-gitlab-event': hook, 'x-gitlab-token': GL_SECRET, 'idempotency-key': `gl-actions-${++n}` },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * An emoji hook as GitLab builds it (Gitlab::DataBuilder::Emoji, Gitlab::HookData::EmojiBuilder):
 * the action only in `event_type`; the docs' example also shows `object_attributes.action`.
 */
function emojiAsBuilt(eventType: string): string {
  const { object_attributes: { action: _action, ...attributes }, ...rest } = JSON.parse(fixture('emoji.json')) as { object_attributes: Record<string, unknown> };
  return JSON.stringify({ ...rest, event_type: eventType, object_attributes: attributes });
}

const subscribe = (name: string, events: string, prompt = 'no message') =>
  h.cli('webhook', 'subscribe', name, '--events', events, '--prompt', prompt, '--deliver', 'messenger');

test('gitlab:milestone.close: subscribed without a word, reached by the close of a group milestone, not by a create', async () => {
  expect(await subscribe('milestones', 'gitlab:milestone.close', 'Milestone {object_attributes.title}: {action}')).toMatchObject({ code: 0, stderr: '' });

  expect(await gitlab('Milestone Hook', fixture('milestone_group_close.json'))).toMatchObject({ status: 202, body: { status: 'accepted', event: 'milestone', subscriptions: ['milestones'] } });
  await eventually(() => h.telegram.requests.length === 1, 'the Telegram message');
  expect(JSON.parse(h.telegram.requests[0]!.body)).toMatchObject({ chat_id: '-100', text: 'Milestone sub-v1.0.0: close' });

  expect(await gitlab('Milestone Hook', fixture('milestone.json'))).toEqual({ status: 200, body: { status: 'ignored', reason: 'Event not handled', event: 'milestone' } });
}, 60_000);

test('group member, project and subgroup hooks (event_name) and emoji hooks (event_type) reach the filters on their actions', async () => {
  expect(await subscribe('members', 'gitlab:member.user_add_to_group', '{user_username} joined {group_path}')).toMatchObject({ code: 0, stderr: '' });
  expect(await subscribe('group-changes', 'gitlab:project.project_create,gitlab:subgroup.subgroup_destroy', '{event_name} {name}')).toMatchObject({ code: 0, stderr: '' });
  expect(await subscribe('reactions', 'gitlab:emoji.revoke', '{user.username} took back {object_attributes.name}')).toMatchObject({ code: 0, stderr: '' });

  const accepted = (event: string, subscription: string) => ({ status: 202, body: expect.objectContaining({ status: 'accepted', event, subscriptions: [subscription] }) });
  const ignored = (event: string) => ({ status: 200, body: { status: 'ignored', reason: 'Event not handled', event } });
  const sent = {
    member_add: await gitlab('Member Hook', fixture('group/user_add_to_group.json')),
    member_remove: await gitlab('Member Hook', fixture('group/user_remove_from_group.json')),
    project_create: await gitlab('Project Hook', fixture('group/project_create.json')),
    project_destroy: await gitlab('Project Hook', fixture('group/project_destroy.json')),
    subgroup_destroy: await gitlab('Subgroup Hook', fixture('group/subgroup_destroy.json')),
    subgroup_create: await gitlab('Subgroup Hook', fixture('group/subgroup_create.json')),
    emoji_award: await gitlab('Emoji Hook', fixture('emoji.json')),
    emoji_revoke: await gitlab('Emoji Hook', emojiAsBuilt('revoke')),
  };
  expect(sent).toEqual({
    member_add: accepted('member', 'members'), member_remove: ignored('member'),
    project_create: accepted('project', 'group-changes'), project_destroy: ignored('project'),
    subgroup_destroy: accepted('subgroup', 'group-changes'), subgroup_create: ignored('subgroup'),
    emoji_award: ignored('emoji'), emoji_revoke: accepted('emoji', 'reactions'),
  });

  const log = JSON.parse((await h.cli('webhook', 'requests', '--endpoint', 'gitlab', '--json', '--limit', '50')).stdout) as Array<{ outcome: string; event?: string; action?: string }>;
  expect(log.filter((e) => e.event !== 'milestone').map((e) => `${e.event}.${e.action} ${e.outcome}`).sort()).toEqual([
    'emoji.award not_handled', 'emoji.revoke accepted', 'member.user_add_to_group accepted', 'member.user_remove_from_group not_handled',
    'project.project_create accepted', 'project.project_destroy not_handled', 'subgroup.subgroup_create not_handled', 'subgroup.subgroup_destroy accepted',
  ]);
  await eventually(() => h.texts().length === 4, 'the four Telegram messages');
  expect(h.texts().sort()).toEqual([
    'project_create project1', 'root took back thumbsup', 'subgroup_destroy subgroup1', 'test_user joined webhook-test',
  ]);
}, 60_000);

test.each([
  ['gitlab:milestone.closed', "Did you mean 'gitlab:milestone.close'?"],
  ['gitlab:member.user_add_to_groups', "Did you mean 'gitlab:member.user_add_to_group'?"],
  ['gitlab:project.project_created', "Did you mean 'gitlab:project.project_create'?"],
  ['gitlab:subgroup.subgroup_destroyed', "Did you mean 'gitlab:subgroup.subgroup_destroy'?"],
  ['gitlab:emoji.awarded', "Did you mean 'gitlab:emoji.award'?"],
])('subscribe refuses the near miss %s', async (events, hint) => {
  const result = await subscribe(`near-miss-${++n}`, events);
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
  expect(result.stderr).toContain(`'${events}' would never match`);
  expect(result.stderr).toContain(hint);
}, 30_000);

test('webhook test --send with a group member payload posts it as a Member Hook, and it is taken', async () => {
  const file = join(h.dir, 'user_add_to_group.json');
  writeFileSync(file, fixture('group/user_add_to_group.json'));
  const sent = await h.cli('webhook', 'test', 'members', '--send', '--url', h.serve.url, '--payload', file);
  expect(sent.code).toBe(0);
  expect(sent.stdout).toContain('POST /webhooks/gitlab → 202');
  await eventually(() => h.texts().length === 1, 'the Telegram message of the test event');
  expect(h.texts()).toEqual(['test_user joined webhook-test']);
}, 60_000);
