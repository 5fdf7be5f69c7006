/**
 * GitLab system hooks through the ingest Lambda's handler over real stores (dynalite):
 * project/group/user/key events carry `event_name` and no `object_kind`; they are the
 * event `system` with that action, so `system.project_create` picks project creations
 * out of them. System hooks with `object_kind` (push, merge_request) keep their kind.
 * Payloads: GitLab's documented examples (tests/fixtures/gitlab/system/).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiEvent } from '../support/requests';
import { GITLAB_SECRET, bodyOf, type Harness, useIngestHarness } from '../support/ingest-harness';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', name), 'utf8');

let h: Harness;
useIngestHarness((started) => {
  h = started;
});

let n = 0;
const systemHook = (body: string, headers: Record<string, string> = {}) =>
  h.handler(apiEvent({ path: '/webhooks/gitlab', body, headers: { 'content-type': 'application/json', 'x-gitlab-event': 'System Hook', 'x-gitlab-token': GITLAB_SECRET, 'x-gitlab-event-uuid': `sys-${++n}`, ...headers } }));

test('system.project_create takes project creations only; system takes every system hook; the request log says why', async () => {
  await h.addSubscription({ name: 'new-projects', events: ['system.project_create'] });
  await h.addSubscription({ name: 'all-system', events: ['gitlab:system'] });

  const created = await systemHook(fixture('system/project_create.json'));
  expect(created.statusCode).toBe(202);
  expect(bodyOf(created)).toMatchObject({ status: 'accepted', event: 'system' });
  expect((bodyOf(created).subscriptions as string[]).sort()).toEqual(['all-system', 'new-projects']);
  expect(h.queue.sent.find((m) => m.subscription === 'new-projects')).toMatchObject({ source: 'gitlab', event: 'system', action: 'project_create' });

  h.queue.sent.length = 0;
  for (const name of ['project_destroy', 'user_create', 'group_create', 'key_create', 'user_add_to_team', 'repository_update']) {
    const result = await systemHook(fixture(`system/${name}.json`));
    expect({ name, status: result.statusCode, subscriptions: bodyOf(result).subscriptions }).toEqual({ name, status: 202, subscriptions: ['all-system'] });
  }
  expect(h.queue.sent.map((m) => m.action)).toEqual(['project_destroy', 'user_create', 'group_create', 'key_create', 'user_add_to_team', 'repository_update']);

  const logged = (await h.requests.list({ limit: 100, endpoint: 'gitlab' })).find((e) => e.action === 'project_destroy');
  expect(logged).toMatchObject({ event: 'system', action: 'project_destroy', outcome: 'accepted' });
  expect(logged?.candidates?.find((c) => c.subscription === 'new-projects')).toMatchObject({ matched: false, reason: 'event filters system.project_create do not match gitlab:system.project_destroy' });
});

test('a system event nobody subscribed to is ignored with 200 (GitLab disables hooks that keep failing)', async () => {
  await h.addSubscription({ name: 'new-projects', events: ['system.project_create'] });
  const result = await systemHook(fixture('system/user_create.json'));
  expect(result.statusCode).toBe(200);
  expect(bodyOf(result)).toEqual({ status: 'ignored', reason: 'Event not handled', event: 'system' });
  expect(h.queue.sent).toHaveLength(0);
});

test('payload filters combine with the action: new projects under one namespace', async () => {
  await h.addSubscription({ name: 'jsmith-projects', events: ['system.project_create'], filters: ['path_with_namespace =~ /^jsmith\\//'] });
  expect(bodyOf(await systemHook(fixture('system/project_create.json')))).toMatchObject({ status: 'accepted', subscriptions: ['jsmith-projects'] });
  const elsewhere = fixture('system/project_create.json').replace('jsmith/storecloud', 'other/storecloud');
  expect(bodyOf(await systemHook(elsewhere))).toEqual({ status: 'ignored', reason: 'Filtered out', event: 'system' });
});

test('system hooks that carry object_kind keep their kind: push and merge_request go to push / merge_request subscribers', async () => {
  await h.addSubscription({ name: 'pushes', events: ['gitlab:push'] });
  await h.addSubscription({ name: 'mr-open', events: ['merge_request.open'] });
  await h.addSubscription({ name: 'all-system', events: ['system'] });
  expect(bodyOf(await systemHook(fixture('push.json')))).toMatchObject({ status: 'accepted', event: 'push', subscriptions: ['pushes'] });
  expect(bodyOf(await systemHook(fixture('merge_request.json')))).toMatchObject({ status: 'accepted', event: 'merge_request', subscriptions: ['mr-open'] });
  // The documented system-hook push names its kind only in event_name: still a push.
  expect(bodyOf(await systemHook(fixture('system/push.json')))).toMatchObject({ status: 'accepted', event: 'push', subscriptions: ['pushes'] });
  expect(h.queue.sent.map((m) => [m.subscription, m.event, m.action])).toEqual([['pushes', 'push', undefined], ['mr-open', 'merge_request', 'open'], ['pushes', 'push', undefined]]);
});

test('bad input on system hooks: wrong token 401, not JSON 400, odd event_name still the event system without an action', async () => {
  await h.addSubscription({ name: 'all-system', events: ['system'] });
  const wrong = await systemHook(fixture('system/project_create.json'), { 'x-gitlab-token': 'nope' });
  expect(wrong.statusCode).toBe(401);
  expect(bodyOf(wrong)).toEqual({ status: 'error', code: 'signature_invalid', message: 'Webhook signature invalid' });
  const notJson = await systemHook('event_name=project_create');
  expect(notJson.statusCode).toBe(400);
  expect(bodyOf(notJson)).toMatchObject({ status: 'error', code: 'invalid_json' });
  for (const value of [42, '', 'two words', '../../x', null]) {
    const result = await systemHook(JSON.stringify({ event_name: value, project_id: 74 }));
    expect({ value, status: result.statusCode, body: bodyOf(result) }).toMatchObject({ value, status: 202, body: { status: 'accepted', event: 'system' } });
  }
  expect(h.queue.sent.every((m) => m.action === undefined)).toBe(true);
});
