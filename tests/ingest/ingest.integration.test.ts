/**
 * The ingest Lambda handler end to end over real stores (dynalite): every row of the
 * DESIGN §2.1 response table, every authentication scheme, and the bad inputs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import githubExamples from '@octokit/webhooks-examples';
import { signHub } from '../../functions/core/auth/signatures';
import { commentMarker } from '../../functions/core/events/loop-guard';
import { eventMatches } from '../../functions/core/events/filters';
import { newEventId } from '../../functions/core/ids';
import { DEDUP_TTL_SECONDS, DEFAULT_CLAIM_LEASE_MS } from '../../functions/core/ingest/service';
import type { QueueMessage } from '../../functions/core/types';
import { apiEvent, githubEvent, standardHeaders } from '../support/requests';
import { GITHUB_SECRET, GITLAB_SECRET, bodyOf, startHarness, type Harness } from '../support/ingest-harness';

// A copy of shared/fixtures (vendor payloads from their docs; see tests/fixtures/README.md).
const FIXTURES = join(__dirname, '..', 'fixtures');
const fixture = (path: string) => readFileSync(join(FIXTURES, path), 'utf8');

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(async () => {
  h.queue.sent.length = 0;
  for (const s of await h.subscriptions.list()) await h.subscriptions.delete(s.name);
});

const PR_BODY = JSON.stringify({ action: 'opened', number: 7, pull_request: { number: 7, title: 'Add {braces}' }, repository: { full_name: 'o/r' } });

describe('the response table of DESIGN §2.1', () => {
  test('queued → 202 accepted with the event, delivery id and subscriptions; one message per subscription', async () => {
    await h.addSubscription({ name: 'pr-review', events: ['pull_request'] });
    await h.addSubscription({ name: 'opened-only', events: ['pull_request.opened'] });
    await h.addSubscription({ name: 'closed-only', events: ['pull_request.closed'] });
    const event = githubEvent('pull_request', PR_BODY, GITHUB_SECRET, { 'x-github-delivery': 'delivery-1' });
    const result = await h.handler(event);
    expect(result.statusCode).toBe(202);
    const body = bodyOf(result);
    expect(body).toMatchObject({ status: 'accepted', event: 'pull_request', delivery_id: 'delivery-1' });
    expect((body.subscriptions as string[]).sort()).toEqual(['opened-only', 'pr-review']);
    expect(h.queue.sent.map((m) => m.subscription).sort()).toEqual(['opened-only', 'pr-review']);
    const message = h.queue.sent[0];
    expect(message).toMatchObject({ v: 1, source: 'github', event: 'pull_request', action: 'opened', delivery_id: 'delivery-1' });
    expect(message?.payload).toEqual(JSON.parse(PR_BODY));
    const records = await h.events.getEvent(body.event_id as string);
    expect(records.map((r) => [r.subscription, r.status]).sort()).toEqual([['opened-only', 'queued'], ['pr-review', 'queued']]);
    expect(result.headers?.['content-type']).toMatch(/application\/json/);
  });

  test('GitHub ping → 200 ok, nothing queued', async () => {
    await h.addSubscription({ name: 'all', events: ['*'] });
    const result = await h.handler(githubEvent('ping', JSON.stringify({ zen: 'Keep it simple.', hook_id: 1 }), GITHUB_SECRET));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({ status: 'ok', event: 'ping' });
    expect(h.queue.sent).toHaveLength(0);
  });

  test('no subscription handles the event type → 200 ignored, Event not handled', async () => {
    await h.addSubscription({ name: 'pr-review', events: ['pull_request'] });
    const result = await h.handler(githubEvent('push', JSON.stringify({ ref: 'refs/heads/main' }), GITHUB_SECRET));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({ status: 'ignored', reason: 'Event not handled', event: 'push' });
    expect(h.queue.sent).toHaveLength(0);
  });

  test('only paused subscriptions match → 202 held, stored and not queued', async () => {
    await h.addSubscription({ name: 'sleepy', events: ['pull_request'], state: 'paused' });
    const result = await h.handler(githubEvent('pull_request', PR_BODY, GITHUB_SECRET));
    expect(result.statusCode).toBe(202);
    const body = bodyOf(result);
    expect(body).toMatchObject({ status: 'held', event: 'pull_request', subscriptions: ['sleepy'] });
    expect(h.queue.sent).toHaveLength(0);
    const held = await h.events.listByStatus('sleepy', 'held');
    expect(held).toHaveLength(1);
    expect(held[0]?.message.payload).toEqual(JSON.parse(PR_BODY));
  });

  test('active and paused both match → accepted for the active one, held for the paused one', async () => {
    await h.addSubscription({ name: 'awake', events: ['pull_request'] });
    await h.addSubscription({ name: 'sleepy', events: ['pull_request'], state: 'paused' });
    const body = bodyOf(await h.handler(githubEvent('pull_request', PR_BODY, GITHUB_SECRET)));
    expect(body).toMatchObject({ status: 'accepted', subscriptions: ['awake'], held: ['sleepy'] });
    expect(h.queue.sent.map((m) => m.subscription)).toEqual(['awake']);
  });

  test('same delivery id seen before → 200 duplicate; accepted again once the 24 h window has passed', async () => {
    await h.addSubscription({ name: 'pr-review', events: ['pull_request'] });
    const event = githubEvent('pull_request', PR_BODY, GITHUB_SECRET, { 'x-github-delivery': 'dup-1' });
    expect((await h.handler(event)).statusCode).toBe(202);
    const second = await h.handler(event);
    expect(second.statusCode).toBe(200);
    expect(bodyOf(second)).toEqual({ status: 'duplicate', delivery_id: 'dup-1' });
    h.clock.advance(24 * 3600 * 1000 - 1000);
    expect(bodyOf(await h.handler(event)).status).toBe('duplicate');
    // The item is still in the table (TTL deletion is lazy), but expired: not a duplicate.
    h.clock.advance(2000);
    expect(bodyOf(await h.handler(event)).status).toBe('accepted');
    expect(h.queue.sent).toHaveLength(2);
  });

  test('a request that died holding a delivery id: its retry answers 503 in_progress within the lease, then finishes the same event', async () => {
    await h.addSubscription({ name: 'after-crash', events: ['pull_request'] });
    // What a request killed between storing and queueing leaves: a pending claim and a queued record.
    const eventId = newEventId(h.clock.now());
    expect(await h.dedup.claim('github#died-1', { eventId, ttlSeconds: DEDUP_TTL_SECONDS, staleBefore: 0 })).toEqual({ kind: 'new' });
    const message: QueueMessage = { v: 1, event_id: eventId, subscription: 'after-crash', source: 'github', event: 'pull_request', action: 'opened', delivery_id: 'died-1', received_at: new Date(h.clock.now()).toISOString(), payload: JSON.parse(PR_BODY) as Record<string, unknown> };
    await h.events.putAll([{ event_id: eventId, subscription: 'after-crash', status: 'queued', source: 'github', event: 'pull_request', action: 'opened', delivery_id: 'died-1', received_at: message.received_at, updated_at: message.received_at, message, attempts: 0 }]);

    const retry = githubEvent('pull_request', PR_BODY, GITHUB_SECRET, { 'x-github-delivery': 'died-1' });
    const early = await h.handler(retry);
    expect(early.statusCode).toBe(503);
    expect(early.headers?.['retry-after']).toBe('5');
    expect(bodyOf(early)).toMatchObject({ status: 'error', code: 'in_progress' });
    expect(h.queue.sent).toHaveLength(0);

    h.clock.advance(DEFAULT_CLAIM_LEASE_MS + 1);
    const late = await h.handler(retry);
    expect(late.statusCode).toBe(202);
    expect(bodyOf(late)).toMatchObject({ status: 'accepted', event_id: eventId, subscriptions: ['after-crash'] });
    expect(h.queue.sent).toEqual([message]);
    expect(await h.events.getEvent(eventId)).toHaveLength(1);
    expect(bodyOf(await h.handler(retry))).toEqual({ status: 'duplicate', delivery_id: 'died-1' });
  });

  test('a dead request\'s claim with nothing recorded yet: the retry records and queues the event under the claimed id', async () => {
    await h.addSubscription({ name: 'after-early-crash', events: ['pull_request'] });
    await h.dedup.claim('github#died-2', { eventId: 'evt_claimed_only', ttlSeconds: DEDUP_TTL_SECONDS, staleBefore: 0 });
    h.clock.advance(DEFAULT_CLAIM_LEASE_MS + 1);
    const late = await h.handler(githubEvent('pull_request', PR_BODY, GITHUB_SECRET, { 'x-github-delivery': 'died-2' }));
    expect(bodyOf(late)).toMatchObject({ status: 'accepted', event_id: 'evt_claimed_only' });
    expect(h.queue.sent.map((m) => [m.event_id, m.subscription])).toEqual([['evt_claimed_only', 'after-early-crash']]);
    expect((await h.events.getEvent('evt_claimed_only')).map((r) => r.status)).toEqual(['queued']);
  });

  test('a dead request whose event the worker already finished: the retry answers 202 and queues nothing', async () => {
    await h.addSubscription({ name: 'after-late-crash', events: ['pull_request'] });
    await h.dedup.claim('github#died-3', { eventId: 'evt_done', ttlSeconds: DEDUP_TTL_SECONDS, staleBefore: 0 });
    const message: QueueMessage = { v: 1, event_id: 'evt_done', subscription: 'after-late-crash', source: 'github', event: 'pull_request', delivery_id: 'died-3', received_at: '2026-11-23T10:00:00.000Z', payload: {} };
    await h.events.putAll([{ event_id: 'evt_done', subscription: 'after-late-crash', status: 'delivered', source: 'github', event: 'pull_request', delivery_id: 'died-3', received_at: message.received_at, updated_at: message.received_at, message }]);
    h.clock.advance(DEFAULT_CLAIM_LEASE_MS + 1);
    const late = await h.handler(githubEvent('pull_request', PR_BODY, GITHUB_SECRET, { 'x-github-delivery': 'died-3' }));
    expect(bodyOf(late)).toMatchObject({ status: 'accepted', event_id: 'evt_done' });
    expect(h.queue.sent).toHaveLength(0);
    expect((await h.events.getEvent('evt_done')).map((r) => r.status)).toEqual(['delivered']);
  });

  test('dedup is per endpoint: the same id on GitLab is a different delivery', async () => {
    await h.addSubscription({ name: 'everything', events: ['*'] });
    const gh = githubEvent('pull_request', PR_BODY, GITHUB_SECRET, { 'x-github-delivery': 'shared-id' });
    const gl = apiEvent({ path: '/webhooks/gitlab', body: fixture('gitlab/push.json'), headers: { 'x-gitlab-token': GITLAB_SECRET, 'idempotency-key': 'shared-id' } });
    expect(bodyOf(await h.handler(gh)).status).toBe('accepted');
    expect(bodyOf(await h.handler(gl)).status).toBe('accepted');
  });

  test('signature missing or wrong → 401 signature_invalid, Webhook signature invalid', async () => {
    await h.addSubscription({ name: 'pr-review', events: ['pull_request'] });
    const wrong = githubEvent('pull_request', PR_BODY, 'not-the-secret');
    const missing = apiEvent({ path: '/webhooks/github', body: PR_BODY, headers: { 'x-github-event': 'pull_request' } });
    for (const event of [wrong, missing]) {
      const result = await h.handler(event);
      expect(result.statusCode).toBe(401);
      expect(bodyOf(result)).toEqual({ status: 'error', code: 'signature_invalid', message: 'Webhook signature invalid' });
    }
    expect(h.queue.sent).toHaveLength(0);
  });

  test('body over max_payload_size → 413 payload_too_large, Payload too large', async () => {
    const result = await h.handler(githubEvent('push', JSON.stringify({ pad: 'x'.repeat(70 * 1024) }), GITHUB_SECRET));
    expect(result.statusCode).toBe(413);
    expect(bodyOf(result)).toEqual({ status: 'error', code: 'payload_too_large', message: 'Payload too large' });
  });

  test('unknown custom subscription → 404 subscription_not_found', async () => {
    const result = await h.handler(apiEvent({ path: '/webhooks/custom/nobody', body: '{}' }));
    expect(result.statusCode).toBe(404);
    expect(bodyOf(result)).toMatchObject({ status: 'error', code: 'subscription_not_found', message: "No subscription named 'nobody'" });
  });

  test('names with path separators, dots or control characters are not echoed and not found', async () => {
    // A leading '-' or '_' is not a valid name either (SUBSCRIPTION_NAME_PATTERN), so it is not echoed.
    for (const path of ['/webhooks/custom/..%2F..%2Fetc', '/webhooks/custom/a%0Ab', '/webhooks/custom/a.b', '/webhooks/custom/-lead', '/webhooks/custom/_x']) {
      const result = await h.handler(apiEvent({ path, body: '{}' }));
      expect(result.statusCode).toBe(404);
      expect(bodyOf(result).message).toBe('No subscription with that name');
    }
  });

  test('wrong method → 405 with Allow; unknown path → 404; both JSON', async () => {
    const get = await h.handler(apiEvent({ method: 'GET', path: '/webhooks/github' }));
    expect(get.statusCode).toBe(405);
    expect(get.headers?.allow).toBe('POST');
    expect(bodyOf(get)).toMatchObject({ status: 'error', code: 'method_not_allowed' });
    const postHealth = await h.handler(apiEvent({ method: 'POST', path: '/health', body: '{}' }));
    expect(postHealth.statusCode).toBe(405);
    expect(postHealth.headers?.allow).toBe('GET, HEAD');
    expect(bodyOf(postHealth).message).toBe('Method not allowed; use GET, HEAD');
    for (const path of ['/', '/webhooks', '/webhooks/custom', '/webhooks/bitbucket', '/admin']) {
      const result = await h.handler(apiEvent({ path, body: '{}' }));
      expect(result.statusCode).toBe(404);
      expect(bodyOf(result)).toMatchObject({ status: 'error', code: 'not_found' });
    }
  });

  test('GET /health → 200 {"status":"ok"}; HEAD /health → 200 too (uptime monitors probe with HEAD)', async () => {
    const result = await h.handler(apiEvent({ method: 'GET', path: '/health' }));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({ status: 'ok' });
    const head = await h.handler(apiEvent({ method: 'HEAD', path: '/health' }));
    expect(head.statusCode).toBe(200);
    // HEAD on a webhook URL is still refused: only POST delivers events.
    const headHook = await h.handler(apiEvent({ method: 'HEAD', path: '/webhooks/github' }));
    expect(headHook.statusCode).toBe(405);
  });

  test('queue unavailable → 503 with Retry-After, dedup key released: the retry is accepted', async () => {
    await h.addSubscription({ name: 'flaky-queue', events: ['pull_request'] });
    const event = githubEvent('pull_request', PR_BODY, GITHUB_SECRET, { 'x-github-delivery': 'retry-me' });
    h.queue.refuseNext();
    const failed = await h.handler(event);
    expect(failed.statusCode).toBe(503);
    expect(failed.headers?.['retry-after']).toBe('5');
    expect(bodyOf(failed)).toMatchObject({ status: 'error', code: 'unavailable' });
    expect(await h.events.listBySubscription('flaky-queue', 10)).toHaveLength(0);
    const retried = await h.handler(event);
    expect(retried.statusCode).toBe(202);
    expect(bodyOf(retried)).toMatchObject({ status: 'accepted', delivery_id: 'retry-me' });
    expect(h.queue.sent).toHaveLength(1);
  });

  test('store unavailable → 503 and nothing half-accepted', async () => {
    const handler = await h.withConfig('webhooks: { github: { secret: ${GH_SECRET} } }');
    await h.dynamo.close();
    try {
      const result = await handler(githubEvent('pull_request', PR_BODY, GITHUB_SECRET));
      expect(result.statusCode).toBe(503);
      expect(bodyOf(result)).toMatchObject({ code: 'unavailable' });
    } finally {
      h = await startHarnessAgain();
    }
  });
});

async function startHarnessAgain(): Promise<Harness> {
  return startHarness();
}

describe('GitHub: every payload of @octokit/webhooks-examples', () => {
  const filters = ['pull_request', 'issues.opened', 'push', 'issue_comment.created', 'release'];
  const cases = githubExamples.flatMap((group) =>
    group.examples.map((example, index) => ({ event: group.name, index, body: JSON.stringify(example) })));

  test(`signed correctly → accepted or ignored as the subscriptions say (${cases.length} payloads, ${githubExamples.length} event types)`, async () => {
    await h.addSubscription({ name: 'gh', events: filters });
    let accepted = 0;
    for (const c of cases) {
      const payload = JSON.parse(c.body) as { action?: string };
      const result = await h.handler(githubEvent(c.event, c.body, GITHUB_SECRET));
      const body = bodyOf(result);
      if (c.event === 'ping') {
        expect([result.statusCode, body.status]).toEqual([200, 'ok']);
      } else if (eventMatches(filters, c.event, payload.action)) {
        expect([c.event, result.statusCode, body.status]).toEqual([c.event, 202, 'accepted']);
        accepted += 1;
      } else {
        expect([c.event, result.statusCode, body.status, body.reason]).toEqual([c.event, 200, 'ignored', 'Event not handled']);
      }
    }
    expect(accepted).toBeGreaterThan(20);
    expect(h.queue.sent).toHaveLength(accepted);
  });

  test('the same body with one byte changed → 401', async () => {
    await h.addSubscription({ name: 'gh', events: ['pull_request'] });
    const event = githubEvent('pull_request', PR_BODY, GITHUB_SECRET);
    event.body = PR_BODY.replace('"opened"', '"openee"');
    expect((await h.handler(event)).statusCode).toBe(401);
  });

  test('a signature without the sha256= prefix → 401', async () => {
    await h.addSubscription({ name: 'gh', events: ['pull_request'] });
    const hex = signHub(PR_BODY, GITHUB_SECRET).slice('sha256='.length);
    const event = githubEvent('pull_request', PR_BODY, GITHUB_SECRET, { 'x-hub-signature-256': hex });
    expect((await h.handler(event)).statusCode).toBe(401);
  });

  test('a body re-serialised after signing → 401', async () => {
    await h.addSubscription({ name: 'gh', events: ['pull_request'] });
    const pretty = JSON.stringify(JSON.parse(PR_BODY), null, 2);
    const event = githubEvent('pull_request', PR_BODY, GITHUB_SECRET);
    event.body = pretty;
    expect((await h.handler(event)).statusCode).toBe(401);
  });

  test('a rotated secret list: either secret verifies', async () => {
    const handler = await h.withConfig('webhooks: { github: { secret: [${OLD}, ${NEW}] } }', { OLD: 'old-secret', NEW: 'new-secret' });
    await h.addSubscription({ name: 'gh', events: ['pull_request'] });
    expect((await handler(githubEvent('pull_request', PR_BODY, 'old-secret'))).statusCode).toBe(202);
    expect((await handler(githubEvent('pull_request', PR_BODY, 'new-secret'))).statusCode).toBe(202);
    expect((await handler(githubEvent('pull_request', PR_BODY, 'other'))).statusCode).toBe(401);
  });

  test('no secret configured for GitHub → 401 (fail closed), even with a signature', async () => {
    const handler = await h.withConfig('webhooks: { gitlab: { secret: ${GL_SECRET} } }');
    await h.addSubscription({ name: 'gh', events: ['pull_request'] });
    expect((await handler(githubEvent('pull_request', PR_BODY, ''))).statusCode).toBe(401);
    expect((await handler(githubEvent('pull_request', PR_BODY, GITHUB_SECRET))).statusCode).toBe(401);
  });

  test('missing X-GitHub-Event → 400 invalid_event', async () => {
    await h.addSubscription({ name: 'gh', events: ['*'] });
    const event = githubEvent('pull_request', PR_BODY, GITHUB_SECRET);
    delete event.headers['x-github-event'];
    const result = await h.handler(event);
    expect(result.statusCode).toBe(400);
    expect(bodyOf(result)).toMatchObject({ code: 'invalid_event' });
  });

  test('loop guard: a comment carrying our marker is ignored', async () => {
    await h.addSubscription({ name: 'gh', events: ['issue_comment'] });
    const body = JSON.stringify({ action: 'created', issue: { number: 1 }, comment: { body: `Review done\n${commentMarker('gh', 'evt_1')}` } });
    const result = await h.handler(githubEvent('issue_comment', body, GITHUB_SECRET));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({ status: 'ignored', reason: 'Event caused by hookagent', event: 'issue_comment' });
    expect(h.queue.sent).toHaveLength(0);
  });
});

describe('GitLab fixtures', () => {
  const fixtures: Array<[string, string, string]> = [
    ['push.json', 'Push Hook', 'push'],
    ['tag_push.json', 'Tag Push Hook', 'tag_push'],
    ['issue.json', 'Issue Hook', 'issue'],
    ['merge_request.json', 'Merge Request Hook', 'merge_request'],
    ['note_merge_request.json', 'Note Hook', 'note'],
    ['pipeline.json', 'Pipeline Hook', 'pipeline'],
    ['release.json', 'Release Hook', 'release'],
  ];

  test.each(fixtures)('%s with the right X-Gitlab-Token → accepted as %s', async (file, header, kind) => {
    await h.addSubscription({ name: 'gl', events: ['*'] });
    const result = await h.handler(apiEvent({
      path: '/webhooks/gitlab', body: fixture(`gitlab/${file}`),
      headers: { 'x-gitlab-event': header, 'x-gitlab-token': GITLAB_SECRET, 'x-gitlab-event-uuid': `uuid-${file}` },
    }));
    expect(result.statusCode).toBe(202);
    expect(bodyOf(result)).toMatchObject({ status: 'accepted', event: kind, delivery_id: `uuid-${file}` });
  });

  test('a release hook\'s action is its top-level action: gitlab:release.create matches, release.delete does not', async () => {
    await h.addSubscription({ name: 'gl-release', events: ['gitlab:release.create'] });
    await h.addSubscription({ name: 'gl-deleted', events: ['gitlab:release.delete'] });
    const result = await h.handler(apiEvent({
      path: '/webhooks/gitlab', body: fixture('gitlab/release.json'),
      headers: { 'x-gitlab-event': 'Release Hook', 'x-gitlab-token': GITLAB_SECRET, 'x-gitlab-event-uuid': 'uuid-release-action' },
    }));
    expect(result.statusCode).toBe(202);
    expect(bodyOf(result)).toMatchObject({ status: 'accepted', event: 'release', subscriptions: ['gl-release'] });
  });

  test.each(fixtures)('%s with a wrong or missing token → 401', async (file, header) => {
    await h.addSubscription({ name: 'gl', events: ['*'] });
    for (const token of ['wrong-token', undefined]) {
      const headers: Record<string, string> = { 'x-gitlab-event': header };
      if (token) headers['x-gitlab-token'] = token;
      const result = await h.handler(apiEvent({ path: '/webhooks/gitlab', body: fixture(`gitlab/${file}`), headers }));
      expect(result.statusCode).toBe(401);
    }
    expect(h.queue.sent).toHaveLength(0);
  });

  test('a token-authenticated request with a webhook-signature that does not verify: its webhook-id is no dedup key (the event UUID is)', async () => {
    await h.addSubscription({ name: 'gl', events: ['*'] });
    const send = (uuid: string) => h.handler(apiEvent({
      path: '/webhooks/gitlab', body: fixture('gitlab/merge_request.json'),
      headers: { 'x-gitlab-token': GITLAB_SECRET, 'x-gitlab-event-uuid': uuid, 'webhook-id': 'chosen-1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
    }));
    expect(bodyOf(await send('uuid-1'))).toMatchObject({ status: 'accepted', delivery_id: 'uuid-1' });
    // A new delivery reusing the caller-chosen webhook-id is a new event, not a duplicate.
    expect(bodyOf(await send('uuid-3'))).toMatchObject({ status: 'accepted', delivery_id: 'uuid-3' });
  });

  test('merge_request.open matches by object_attributes.action; other actions do not', async () => {
    await h.addSubscription({ name: 'mr-open', events: ['merge_request.open'] });
    await h.addSubscription({ name: 'mr-merge', events: ['merge_request.merge'] });
    const body = bodyOf(await h.handler(apiEvent({
      path: '/webhooks/gitlab', body: fixture('gitlab/merge_request.json'), headers: { 'x-gitlab-token': GITLAB_SECRET },
    })));
    expect(body).toMatchObject({ status: 'accepted', subscriptions: ['mr-open'] });
    expect(h.queue.sent[0]?.action).toBe('open');
  });

  test('signed webhooks (Standard Webhooks headers, whsec_ signing token)', async () => {
    const signing = `whsec_${Buffer.from('a gitlab signing token of 32 b.').toString('base64')}`;
    const handler = await h.withConfig('webhooks: { gitlab: { secret: ${GL_SIGNING} } }', { GL_SIGNING: signing });
    await h.addSubscription({ name: 'gl', events: ['*'] });
    const body = fixture('gitlab/issue.json');
    const now = Math.floor(h.clock.now() / 1000);
    const good = await handler(apiEvent({ path: '/webhooks/gitlab', body, headers: { 'x-gitlab-event': 'Issue Hook', ...standardHeaders(body, signing, 'msg_1', now) } }));
    expect(good.statusCode).toBe(202);
    expect(bodyOf(good)).toMatchObject({ status: 'accepted', event: 'issue', delivery_id: 'msg_1' });
    const tampered = standardHeaders(body, signing, 'msg_2', now);
    const bad = await handler(apiEvent({ path: '/webhooks/gitlab', body: body.replace('open', 'clos'), headers: tampered }));
    expect(bad.statusCode).toBe(401);
  });

  test('without object_kind the X-Gitlab-Event header names the event', async () => {
    await h.addSubscription({ name: 'gl', events: ['issue'] });
    const payload = JSON.parse(fixture('gitlab/issue.json')) as Record<string, unknown>;
    delete payload.object_kind;
    const result = await h.handler(apiEvent({
      path: '/webhooks/gitlab', body: JSON.stringify(payload), headers: { 'x-gitlab-event': 'Confidential Issue Hook', 'x-gitlab-token': GITLAB_SECRET },
    }));
    expect(bodyOf(result)).toMatchObject({ status: 'accepted', event: 'issue' });
  });

  test('without object_kind, an X-Gitlab-Event GitLab never sends is no event type (400), not an event for gitlab:*', async () => {
    await h.addSubscription({ name: 'gl', events: ['gitlab:*'] });
    const payload = JSON.parse(fixture('gitlab/issue.json')) as Record<string, unknown>;
    delete payload.object_kind;
    for (const header of ['hello', 'Not A Real Hook', 'Push Event']) {
      const result = await h.handler(apiEvent({ path: '/webhooks/gitlab', body: JSON.stringify(payload), headers: { 'x-gitlab-event': header, 'x-gitlab-token': GITLAB_SECRET } }));
      expect(result.statusCode).toBe(400);
      expect(bodyOf(result)).toMatchObject({ code: 'invalid_event' });
    }
    expect(h.queue.sent).toHaveLength(0);
  });

  test('an unsigned request\'s webhook-id is not its delivery id: the same request twice is two events', async () => {
    await h.addSubscription({ name: 'gl', events: ['issue'] });
    const send = () => h.handler(apiEvent({ path: '/webhooks/gitlab', body: fixture('gitlab/issue.json'), headers: { 'x-gitlab-token': GITLAB_SECRET, 'webhook-id': 'unsigned-1' } }));
    expect(bodyOf(await send())).toMatchObject({ status: 'accepted' });
    expect(bodyOf(await send())).toMatchObject({ status: 'accepted' });
    expect(h.queue.sent).toHaveLength(2);
  });
});

describe('custom endpoints', () => {
  const ALERT = fixture('alerts/alertmanager.json');

  async function custom(headers: Record<string, string>, body = ALERT, name = 'alerts') {
    return h.handler(apiEvent({ path: `/webhooks/custom/${name}`, body, headers }));
  }

  test('Standard Webhooks: valid → accepted; 301 s old or in the future → 401; one valid among several → accepted', async () => {
    const sub = await h.addSubscription({ name: 'alerts' });
    const now = Math.floor(h.clock.now() / 1000);
    expect((await custom(standardHeaders(ALERT, sub.secret, 'id-1', now))).statusCode).toBe(202);
    expect((await custom(standardHeaders(ALERT, sub.secret, 'id-2', now - 300))).statusCode).toBe(202);
    expect((await custom(standardHeaders(ALERT, sub.secret, 'id-3', now - 301))).statusCode).toBe(401);
    expect((await custom(standardHeaders(ALERT, sub.secret, 'id-4', now + 301))).statusCode).toBe(401);
    const several = standardHeaders(ALERT, sub.secret, 'id-5', now);
    several['webhook-signature'] = `v1,${Buffer.alloc(32, 1).toString('base64')} ${several['webhook-signature']} v2,abc`;
    expect((await custom(several)).statusCode).toBe(202);
    const none = standardHeaders(ALERT, 'whsec_b3RoZXI=', 'id-6', now);
    expect((await custom(none)).statusCode).toBe(401);
  });

  test('X-Hub-Signature-256 with the subscription secret', async () => {
    const sub = await h.addSubscription({ name: 'alerts' });
    expect((await custom({ 'x-hub-signature-256': signHub(ALERT, sub.secret) })).statusCode).toBe(202);
    expect((await custom({ 'x-hub-signature-256': signHub(ALERT, 'other') })).statusCode).toBe(401);
  });

  test('Authorization: Bearer <secret> (Alertmanager cannot sign)', async () => {
    const sub = await h.addSubscription({ name: 'alerts' });
    const result = await custom({ authorization: `Bearer ${sub.secret}` });
    expect(result.statusCode).toBe(202);
    expect(h.queue.sent[0]).toMatchObject({ subscription: 'alerts', source: 'custom', event: 'alert', action: 'firing' });
    expect((await custom({ authorization: 'Bearer nope' })).statusCode).toBe(401);
    expect((await custom({})).statusCode).toBe(401);
  });

  test('Basic auth, PagerDuty and Grafana HMAC headers', async () => {
    const sub = await h.addSubscription({ name: 'alerts' });
    const basic = Buffer.from(`grafana:${sub.secret}`).toString('base64');
    expect((await custom({ authorization: `Basic ${basic}` })).statusCode).toBe(202);
    const pd = fixture('alerts/pagerduty_v3.json');
    const pdSig = signHub(pd, sub.secret).replace('sha256=', 'v1=');
    expect((await custom({ 'x-pagerduty-signature': `v1=${'0'.repeat(64)},${pdSig}` }, pd)).statusCode).toBe(202);
    const grafana = fixture('alerts/grafana.json');
    expect((await custom({ 'x-grafana-alerting-signature': signHub(grafana, sub.secret).slice(7) }, grafana)).statusCode).toBe(202);
    expect((await custom({ 'x-grafana-alerting-signature': 'f'.repeat(64) }, grafana)).statusCode).toBe(401);
  });

  test('a custom endpoint reaches only its own subscription, and uses only its secret', async () => {
    const a = await h.addSubscription({ name: 'alerts' });
    await h.addSubscription({ name: 'other' });
    const result = await custom({ authorization: `Bearer ${a.secret}` });
    expect(bodyOf(result).subscriptions).toEqual(['alerts']);
    expect((await custom({ authorization: `Bearer ${a.secret}` }, ALERT, 'other')).statusCode).toBe(401);
  });

  test('event type: X-Event-Type, else event_type, type, event, else custom; filters apply', async () => {
    const sub = await h.addSubscription({ name: 'alerts', events: ['deploy', 'build.finished', 'custom'] });
    const auth = { authorization: `Bearer ${sub.secret}` };
    const cases: Array<[Record<string, string>, Record<string, unknown>, string, number]> = [
      [{ 'x-event-type': 'deploy' }, { event_type: 'ignored' }, 'deploy', 202],
      [{}, { event_type: 'deploy' }, 'deploy', 202],
      [{}, { type: 'build', action: 'finished' }, 'build', 202],
      [{}, { event: 'build', action: 'started' }, 'build', 200],
      [{}, { anything: true }, 'custom', 202],
    ];
    for (const [headers, payload, event, status] of cases) {
      const result = await custom({ ...auth, ...headers }, JSON.stringify(payload));
      expect([event, result.statusCode, bodyOf(result).event]).toEqual([event, status, event]);
    }
  });

  test('delivery id: webhook-id, else X-Request-ID, else Idempotency-Key', async () => {
    const sub = await h.addSubscription({ name: 'alerts' });
    const auth = { authorization: `Bearer ${sub.secret}` };
    expect(bodyOf(await custom({ ...auth, 'x-request-id': 'r-1', 'idempotency-key': 'i-1' })).delivery_id).toBe('r-1');
    expect(bodyOf(await custom({ ...auth, 'idempotency-key': 'i-1' })).delivery_id).toBe('i-1');
    expect(bodyOf(await custom({ ...auth, 'idempotency-key': 'i-1' })).status).toBe('duplicate');
    const fresh1 = bodyOf(await custom(auth));
    const fresh2 = bodyOf(await custom(auth));
    expect(fresh1.status).toBe('accepted');
    expect(fresh2.status).toBe('accepted');
    expect(fresh1.delivery_id).not.toBe(fresh2.delivery_id);
  });
});

describe('size', () => {
  const LIMIT = 64 * 1024;
  const bodyOfSize = (size: number) => {
    const skeleton = JSON.stringify({ pad: '' });
    return JSON.stringify({ pad: 'x'.repeat(size - skeleton.length) });
  };

  test('exactly at the limit → accepted; one byte over → 413', async () => {
    await h.addSubscription({ name: 'all', events: ['*'] });
    const at = bodyOfSize(LIMIT);
    expect(Buffer.byteLength(at)).toBe(LIMIT);
    expect((await h.handler(githubEvent('push', at, GITHUB_SECRET))).statusCode).toBe(202);
    expect((await h.handler(githubEvent('push', bodyOfSize(LIMIT + 1), GITHUB_SECRET))).statusCode).toBe(413);
  });

  test('413 also when Content-Length understates the body', async () => {
    const over = bodyOfSize(LIMIT + 1);
    const result = await h.handler(githubEvent('push', over, GITHUB_SECRET, { 'content-length': '10' }));
    expect(result.statusCode).toBe(413);
  });

  test('a Content-Length over the limit is refused before anything else is read', async () => {
    const result = await h.handler(githubEvent('push', '{}', GITHUB_SECRET, { 'content-length': String(LIMIT + 1) }));
    expect(result.statusCode).toBe(413);
  });

  test('base64-encoded bodies are counted after decoding, and signatures checked over the decoded bytes', async () => {
    await h.addSubscription({ name: 'all', events: ['*'] });
    const at = bodyOfSize(LIMIT);
    const event = apiEvent({
      path: '/webhooks/github', body: Buffer.from(at), base64: true,
      headers: { 'x-github-event': 'push', 'x-hub-signature-256': signHub(at, GITHUB_SECRET) },
    });
    expect(event.body!.length).toBeGreaterThan(LIMIT);
    expect((await h.handler(event)).statusCode).toBe(202);
    const over = bodyOfSize(LIMIT + 1);
    const tooBig = apiEvent({
      path: '/webhooks/github', body: Buffer.from(over), base64: true,
      headers: { 'x-github-event': 'push', 'x-hub-signature-256': signHub(over, GITHUB_SECRET) },
    });
    expect((await h.handler(tooBig)).statusCode).toBe(413);
  });

  test('a payload over 200 KB travels through the PayloadStore, the message carries a pointer', async () => {
    const handler = await h.withConfig('webhooks: { github: { secret: ${GH_SECRET} }, max_payload_size: 1MB }');
    await h.addSubscription({ name: 'all', events: ['*'] });
    const big = JSON.stringify({ action: 'opened', pad: 'y'.repeat(300 * 1024) });
    const result = await handler(githubEvent('pull_request', big, GITHUB_SECRET));
    expect(result.statusCode).toBe(202);
    const message = h.queue.sent[0];
    expect(message?.payload).toBeUndefined();
    expect(message?.payload_ref).toMatch(/^file:\/\//);
    expect(await h.payloads.get(message!.payload_ref!)).toBe(big);
  });
});

describe('source address allowlist', () => {
  const config = 'webhooks: { github: { secret: ${GH_SECRET} }, allowed_ips: [140.82.112.0/20, "2a0a:a440::/29", 192.0.2.7] }';

  test('IPv4 and IPv6 ranges and bare addresses; outside → 403 ip_not_allowed', async () => {
    const handler = await h.withConfig(config);
    await h.addSubscription({ name: 'all', events: ['*'] });
    const send = (sourceIp: string, headers: Record<string, string> = {}) => {
      const event = githubEvent('push', '{"ref":"main"}', GITHUB_SECRET, headers);
      event.requestContext.http.sourceIp = sourceIp;
      return handler(event);
    };
    expect((await send('140.82.115.20')).statusCode).toBe(202);
    expect((await send('2a0a:a440:1::5')).statusCode).toBe(202);
    expect((await send('192.0.2.7')).statusCode).toBe(202);
    expect((await send('::ffff:140.82.112.1')).statusCode).toBe(202);
    const outside = await send('203.0.113.9');
    expect(outside.statusCode).toBe(403);
    expect(bodyOf(outside)).toMatchObject({ status: 'error', code: 'ip_not_allowed' });
    expect((await send('2001:db8::1')).statusCode).toBe(403);
    expect((await send('192.0.2.8')).statusCode).toBe(403);
  });

  test('X-Forwarded-For forged to an allowed address does not help', async () => {
    const handler = await h.withConfig(config);
    const event = githubEvent('push', '{}', GITHUB_SECRET, { 'x-forwarded-for': '140.82.112.1', 'x-real-ip': '140.82.112.1' });
    event.requestContext.http.sourceIp = '198.51.100.1';
    expect((await handler(event)).statusCode).toBe(403);
  });

  test('the allowlist is checked first: a bad signature from outside is 403, not 401', async () => {
    const handler = await h.withConfig(config);
    const event = githubEvent('push', '{}', 'wrong');
    event.requestContext.http.sourceIp = '198.51.100.1';
    expect((await handler(event)).statusCode).toBe(403);
  });
});

describe('bodies that are not a JSON object → 400 invalid_json', () => {
  const cases: Array<[string, Buffer]> = [
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
    ['a JSON array', Buffer.from('[1,2,3]')],
    ['a JSON string', Buffer.from('"hello"')],
    ['JSON null', Buffer.from('null')],
    ['truncated JSON', Buffer.from('{"action":"opened","pull_request":{')],
    ['an empty body', Buffer.alloc(0)],
  ];

  test.each(cases)('%s', async (_name, raw) => {
    await h.addSubscription({ name: 'all', events: ['*'] });
    const event = apiEvent({
      path: '/webhooks/github', body: raw, base64: true,
      headers: { 'x-github-event': 'push', 'x-hub-signature-256': signHub(raw, GITHUB_SECRET) },
    });
    const result = await h.handler(event);
    expect(result.statusCode).toBe(400);
    const body = bodyOf(result);
    expect(body).toMatchObject({ status: 'error', code: 'invalid_json' });
    expect(String(body.message)).not.toContain('opened');
    expect(h.queue.sent).toHaveLength(0);
  });

  test('authentication comes before parsing: an unsigned malformed body is 401', async () => {
    const result = await h.handler(apiEvent({ path: '/webhooks/github', body: '{oops', headers: { 'x-github-event': 'push' } }));
    expect(result.statusCode).toBe(401);
  });
});

describe('what responses and logs never carry', () => {
  test('no secret, no stack trace, no payload echo', async () => {
    await h.addSubscription({ name: 'gh', events: ['pull_request'] });
    const secretive = JSON.stringify({ action: 'opened', token: 'PAYLOAD-SECRET-123' });
    const results = [
      await h.handler(githubEvent('pull_request', secretive, GITHUB_SECRET)),
      await h.handler(githubEvent('pull_request', secretive, 'wrong')),
      await h.handler(githubEvent('pull_request', `${secretive}x`, GITHUB_SECRET)),
    ];
    for (const result of results) {
      expect(result.body).not.toContain(GITHUB_SECRET);
      expect(result.body).not.toContain('PAYLOAD-SECRET-123');
      expect(result.body).not.toMatch(/at .*\.ts:\d+/);
    }
    const logs = h.logs.join('');
    expect(logs).not.toContain(GITHUB_SECRET);
    expect(logs).not.toContain('PAYLOAD-SECRET-123');
  });

  test('refused, unhandled and failed requests are logged with the delivery id the sender stated', async () => {
    await h.addSubscription({ name: 'gh-logs', events: ['pull_request'] });
    h.logs.length = 0;
    await h.handler(githubEvent('pull_request', PR_BODY, 'wrong', { 'x-github-delivery': 'forged-1' }));
    await h.handler(githubEvent('push', '{"ref":"x"}', GITHUB_SECRET, { 'x-github-delivery': 'unhandled-2' }));
    h.queue.refuseNext();
    expect((await h.handler(githubEvent('pull_request', PR_BODY, GITHUB_SECRET, { 'x-github-delivery': 'failed-3' }))).statusCode).toBe(503);
    const lines = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(expect.objectContaining({ message: 'refused: signature invalid', delivery_id: 'forged-1' }));
    expect(lines).toContainEqual(expect.objectContaining({ message: 'ignored: no subscription handles the event', delivery_id: 'unhandled-2' }));
    expect(lines).toContainEqual(expect.objectContaining({ message: 'unavailable: a store or the queue failed', delivery_id: 'failed-3' }));
  });

  test('log lines are JSON with the event id and subscription', async () => {
    await h.addSubscription({ name: 'gh', events: ['pull_request'] });
    h.logs.length = 0;
    const body = bodyOf(await h.handler(githubEvent('pull_request', PR_BODY, GITHUB_SECRET)));
    const lines = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(expect.objectContaining({ message: 'queued', event_id: body.event_id, subscription: 'gh' }));
  });
});
