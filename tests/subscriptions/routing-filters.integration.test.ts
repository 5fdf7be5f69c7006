/**
 * Issue 17 through the ingest handler over real stores (dynalite): routing of
 * subscriptions with and without events, source-qualified filters, payload filters, and
 * the request log explaining every outcome of the DESIGN §2.1 table.
 */
import { signHub } from '../../functions/core/auth/signatures';
import { REJECTION_SAMPLES } from '../../functions/core/ingest/request-log';
import { apiEvent, githubEvent, standardHeaders } from '../support/requests';
import { GITHUB_SECRET, GITLAB_SECRET, bodyOf, startHarness, type Harness } from '../support/ingest-harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness(`
webhooks:
  github: { secret: \${GH_SECRET} }
  gitlab: { secret: \${GL_SECRET} }
  max_payload_size: 200KB
`);
});
afterAll(async () => {
  await h.close();
});
beforeEach(async () => {
  h.queue.sent.length = 0;
  for (const s of await h.subscriptions.list()) await h.subscriptions.delete(s.name);
  h.clock.advance(61_000); // a fresh rejection-sampling window
});

const PUSH = JSON.stringify({ ref: 'refs/heads/main', repository: { full_name: 'o/r' } });
const pr = (fields: Record<string, unknown> = {}) => JSON.stringify({
  action: 'opened', number: 7, repository: { full_name: 'o/r' },
  pull_request: { number: 7, draft: false, additions: 120, title: 'Fix the parser', labels: [{ name: 'bug' }, { name: 'needs-review' }], ...fields },
});
const gitlab = (body: Record<string, unknown>, extra: Record<string, string> = {}) => apiEvent({
  path: '/webhooks/gitlab', body: JSON.stringify(body), headers: { 'x-gitlab-token': GITLAB_SECRET, 'idempotency-key': `k-${Math.random()}`, ...extra },
});
/** The newest request log entry; moves the clock on so the next request sorts after it. */
const latest = async () => {
  const [entry] = await h.requests.list({ limit: 1 });
  h.clock.advance(5);
  return entry;
};

describe('routing', () => {
  test('a GitHub push with only custom subscriptions (no events) → 200 Event not handled, nothing queued', async () => {
    await h.addSubscription({ name: 'alerts' });
    await h.addSubscription({ name: 'quiet', events: [] });
    const result = await h.handler(githubEvent('push', PUSH, GITHUB_SECRET));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({ status: 'ignored', reason: 'Event not handled', event: 'push' });
    expect(h.queue.sent).toHaveLength(0);
    const logged = await latest();
    expect(logged).toMatchObject({ endpoint: 'github', outcome: 'not_handled', event: 'push' });
    expect(logged?.candidates).toEqual(expect.arrayContaining([
      { subscription: 'alerts', matched: false, reason: 'no events: reached only through its custom endpoint' },
    ]));
  });

  test('a subscription without events takes every event of its own custom endpoint', async () => {
    const sub = await h.addSubscription({ name: 'alerts' });
    const body = JSON.stringify({ event_type: 'anything' });
    const result = await h.handler(apiEvent({ path: '/webhooks/custom/alerts', body, headers: { authorization: `Bearer ${sub.secret}` } }));
    expect(result.statusCode).toBe(202);
    expect(bodyOf(result).subscriptions).toEqual(['alerts']);
  });

  test('* and unqualified filters match either code host; github:/gitlab:/custom: only their own', async () => {
    await h.addSubscription({ name: 'star', events: ['*'] });
    await h.addSubscription({ name: 'any-push', events: ['push'] });
    await h.addSubscription({ name: 'gh-push', events: ['github:push'] });
    await h.addSubscription({ name: 'gl-mr-open', events: ['gitlab:merge_request.open'] });
    const custom = await h.addSubscription({ name: 'custom-alert', events: ['custom:alert', 'github:push'] });

    const ghPush = bodyOf(await h.handler(githubEvent('push', PUSH, GITHUB_SECRET)));
    expect((ghPush.subscriptions as string[]).sort()).toEqual(['any-push', 'custom-alert', 'gh-push', 'star']);

    const glPush = bodyOf(await h.handler(gitlab({ object_kind: 'push', ref: 'refs/heads/main' })));
    expect((glPush.subscriptions as string[]).sort()).toEqual(['any-push', 'star']);

    const glMr = bodyOf(await h.handler(gitlab({ object_kind: 'merge_request', object_attributes: { action: 'open', iid: 3 } })));
    expect((glMr.subscriptions as string[]).sort()).toEqual(['gl-mr-open', 'star']);
    const glMrUpdate = bodyOf(await h.handler(gitlab({ object_kind: 'merge_request', object_attributes: { action: 'update', iid: 3 } })));
    expect(glMrUpdate.subscriptions).toEqual(['star']);

    const send = (eventType: string) => h.handler(apiEvent({
      path: '/webhooks/custom/custom-alert', body: JSON.stringify({ event_type: eventType }), headers: { authorization: `Bearer ${custom.secret}` },
    }));
    expect(bodyOf(await send('alert'))).toMatchObject({ status: 'accepted', subscriptions: ['custom-alert'] });
    // github:push does not match a custom sender calling its event "push".
    expect(bodyOf(await send('push'))).toMatchObject({ status: 'ignored', reason: 'Event not handled' });
  });
});

describe('payload filters', () => {
  test('all filters hold → accepted; one fails → 200 Filtered out, recorded with the failing filter', async () => {
    await h.addSubscription({
      name: 'review', events: ['pull_request'],
      filters: ['pull_request.draft == false', 'any(pull_request.labels[*].name == needs-review)', 'pull_request.additions >= 100', 'action in [opened, reopened]', 'pull_request.title =~ /^fix/i'],
    });
    const ok = await h.handler(githubEvent('pull_request', pr(), GITHUB_SECRET));
    expect(bodyOf(ok)).toMatchObject({ status: 'accepted', subscriptions: ['review'] });

    const draft = await h.handler(githubEvent('pull_request', pr({ draft: true }), GITHUB_SECRET, { 'x-github-delivery': 'draft-1' }));
    expect(draft.statusCode).toBe(200);
    expect(bodyOf(draft)).toEqual({ status: 'ignored', reason: 'Filtered out', event: 'pull_request' });
    expect(h.queue.sent).toHaveLength(1);
    const logged = await latest();
    expect(logged).toMatchObject({ outcome: 'filtered', delivery_id: 'draft-1', status: 200 });
    expect(logged?.candidates).toEqual([{ subscription: 'review', matched: false, reason: 'filter "pull_request.draft == false" failed (pull_request.draft is true)' }]);

    const noLabel = await h.handler(githubEvent('pull_request', pr({ labels: [{ name: 'bug' }] }), GITHUB_SECRET));
    expect(bodyOf(noLabel).reason).toBe('Filtered out');
    expect((await latest())?.candidates?.[0]?.reason).toContain('any(pull_request.labels[*].name == needs-review)');
  });

  test('one subscription filtered, another accepted → accepted for the other; the log says why for each', async () => {
    await h.addSubscription({ name: 'big', events: ['pull_request'], filters: ['pull_request.additions > 500'] });
    await h.addSubscription({ name: 'all-prs', events: ['pull_request'] });
    const result = bodyOf(await h.handler(githubEvent('pull_request', pr(), GITHUB_SECRET)));
    expect(result).toMatchObject({ status: 'accepted', subscriptions: ['all-prs'] });
    const logged = await latest();
    expect(logged?.outcome).toBe('accepted');
    expect(logged?.candidates?.find((c) => c.subscription === 'big')).toMatchObject({ matched: false });
    expect(logged?.candidates?.find((c) => c.subscription === 'all-prs')).toMatchObject({ matched: true });
  });

  test('exists / !exists and != on an absent path', async () => {
    await h.addSubscription({ name: 'f', events: ['push'], filters: ['exists repository.full_name', '!exists deleted', 'ref != refs/heads/gh-pages'] });
    expect(bodyOf(await h.handler(githubEvent('push', PUSH, GITHUB_SECRET))).status).toBe('accepted');
    const deleted = JSON.stringify({ ref: 'refs/heads/main', deleted: true, repository: { full_name: 'o/r' } });
    expect(bodyOf(await h.handler(githubEvent('push', deleted, GITHUB_SECRET))).reason).toBe('Filtered out');
  });

  test('a regex that backtracks catastrophically, on a 100 KB payload string, answers within the ingest budget', async () => {
    await h.addSubscription({ name: 'redos', events: ['push'], filters: ['head_commit.message =~ /^(a+)+$/', 'ref =~ /(x+x+)+y/'] });
    const body = JSON.stringify({ ref: 'x'.repeat(100_000), head_commit: { message: `${'a'.repeat(100_000)}!` } });
    const started = performance.now();
    const result = await h.handler(githubEvent('push', body, GITHUB_SECRET));
    const ms = performance.now() - started;
    expect(bodyOf(result)).toMatchObject({ status: 'ignored', reason: 'Filtered out' });
    // The ingest Lambda's timeout is 10 s; a backtracking engine takes longer than the age of the universe here.
    expect(ms).toBeLessThan(2_000);
  });
});

describe('the request log explains each outcome of DESIGN §2.1', () => {
  test('accepted, held, duplicate, ping, loop guard, and each rejection, with header names but never values or bodies', async () => {
    await h.addSubscription({ name: 'prs', events: ['pull_request'] });
    const accepted = await h.handler(githubEvent('pull_request', pr(), GITHUB_SECRET, { 'x-github-delivery': 'dup-1' }));
    expect((await latest())).toMatchObject({ outcome: 'accepted', status: 202, event: 'pull_request', action: 'opened', delivery_id: 'dup-1', event_id: bodyOf(accepted).event_id, source_ip: '140.82.115.1' });
    const names = (await latest())?.header_names ?? [];
    expect(names).toEqual(expect.arrayContaining(['x-github-event', 'x-hub-signature-256', 'x-github-delivery']));

    await h.handler(githubEvent('pull_request', pr(), GITHUB_SECRET, { 'x-github-delivery': 'dup-1' }));
    expect((await latest())).toMatchObject({ outcome: 'duplicate', status: 200, delivery_id: 'dup-1' });

    await h.subscriptions.put({ ...(await h.subscriptions.get('prs'))!, state: 'paused' });
    await h.handler(githubEvent('pull_request', pr(), GITHUB_SECRET));
    expect((await latest())).toMatchObject({ outcome: 'held', status: 202 });
    expect((await latest())?.candidates?.[0]?.reason).toContain('paused');

    await h.handler(githubEvent('ping', '{"zen":"x"}', GITHUB_SECRET));
    expect((await latest())?.outcome).toBe('ping');

    const forged = githubEvent('pull_request', pr(), 'wrong-secret');
    await h.handler(forged);
    const rejected = await latest();
    expect(rejected).toMatchObject({ outcome: 'rejected_signature', status: 401, message: 'Webhook signature invalid' });
    const stored = JSON.stringify(rejected);
    expect(stored).not.toContain(forged.headers['x-hub-signature-256']);
    expect(stored).not.toContain('Fix the parser');

    await h.handler(apiEvent({ path: '/webhooks/github', body: '{not json', headers: { 'x-github-event': 'push', 'x-hub-signature-256': signHub('{not json', GITHUB_SECRET) } }));
    expect((await latest())).toMatchObject({ outcome: 'invalid_json', status: 400 });

    await h.handler(apiEvent({ path: '/webhooks/github', body: 'x'.repeat(300 * 1024), headers: { 'x-github-event': 'push' } }));
    expect((await latest())).toMatchObject({ outcome: 'payload_too_large', status: 413 });

    await h.handler(apiEvent({ path: '/webhooks/custom/nobody', body: '{}' }));
    // A name that is not a subscription is sampled under one key: a scanner's made-up names share it.
    expect((await latest())).toMatchObject({ outcome: 'not_found', status: 404, endpoint: 'custom/?' });

    await h.handler(apiEvent({ path: '/wp-login.php', body: '{}' }));
    expect((await latest())).toMatchObject({ outcome: 'not_found', status: 404, endpoint: 'unknown' });

    await h.handler(apiEvent({ path: '/webhooks/github', body: '{}', headers: { 'x-hub-signature-256': signHub('{}', GITHUB_SECRET) } }));
    expect((await latest())).toMatchObject({ outcome: 'invalid_event', status: 400, message: 'X-GitHub-Event header is missing or invalid' });

    // Under the endpoint it was sent to (`webhook requests --endpoint github` finds it), not `unknown`.
    await h.handler(apiEvent({ path: '/webhooks/github', method: 'GET' }));
    expect((await latest())).toMatchObject({ outcome: 'method_not_allowed', status: 405, endpoint: 'github' });
    const custom = await h.addSubscription({ name: 'alerts' });
    await h.handler(apiEvent({ path: '/webhooks/custom/alerts', method: 'DELETE' }));
    expect((await latest())).toMatchObject({ outcome: 'method_not_allowed', status: 405, endpoint: 'custom/alerts' });

    const marker = await h.handler(githubEvent('issue_comment', JSON.stringify({ action: 'created', comment: { body: 'x <!-- hookagent:prs:evt_1 -->' } }), GITHUB_SECRET));
    expect(bodyOf(marker).reason).toBe('Event caused by hookagent');
    expect((await latest())?.outcome).toBe('ignored_loop');

    await h.handler(apiEvent({ path: '/webhooks/custom/alerts', body: '{"a":1}', headers: standardHeaders('{"a":1}', custom.secret, 'w-1', Math.floor(h.clock.now() / 1000)) }));
    expect((await latest())).toMatchObject({ outcome: 'accepted', endpoint: 'custom/alerts', delivery_id: 'w-1' });

    const filtered = await h.requests.list({ limit: 50, outcome: 'rejected_signature' });
    expect(filtered.every((r) => r.outcome === 'rejected_signature')).toBe(true);
    const byEndpoint = await h.requests.list({ limit: 50, endpoint: 'custom/alerts' });
    expect(byEndpoint.length).toBeGreaterThan(0);
    expect(byEndpoint.every((r) => r.endpoint === 'custom/alerts')).toBe(true);
    expect(await h.requests.list({ limit: 2 })).toHaveLength(2);
  });

  test('ip_not_allowed, unavailable (queue down) and in_progress (a live claim) are recorded with their cause', async () => {
    await h.addSubscription({ name: 'prs2', events: ['pull_request'] });
    const restricted = await h.withConfig('webhooks: { github: { secret: ${GH_SECRET} }, allowed_ips: [10.0.0.0/8] }');
    expect((await restricted(githubEvent('pull_request', pr(), GITHUB_SECRET))).statusCode).toBe(403);
    expect(await latest()).toMatchObject({ outcome: 'ip_not_allowed', status: 403, endpoint: 'github', source_ip: '140.82.115.1' });

    h.queue.refuseNext();
    expect((await h.handler(githubEvent('pull_request', pr(), GITHUB_SECRET, { 'x-github-delivery': 'down-1' }))).statusCode).toBe(503);
    const down = await latest();
    expect(down).toMatchObject({ outcome: 'unavailable', status: 503, delivery_id: 'down-1' });
    expect(down?.candidates?.find((c) => c.subscription === 'prs2')).toMatchObject({ matched: true });

    await h.dedup.claim('github#live-1', { eventId: 'evt_live', ttlSeconds: 3600, staleBefore: 0 });
    expect((await h.handler(githubEvent('pull_request', pr(), GITHUB_SECRET, { 'x-github-delivery': 'live-1' }))).statusCode).toBe(503);
    expect(await latest()).toMatchObject({ outcome: 'in_progress', status: 503, delivery_id: 'live-1' });
  });

  test('a flood of forged requests is sampled per endpoint: bounded writes, the next sample counts the skipped ones', async () => {
    const before = (await h.requests.list({ limit: 1000, outcome: 'rejected_signature' })).length;
    for (let i = 0; i < 50; i++) await h.handler(githubEvent('push', PUSH, 'forged'));
    const written = (await h.requests.list({ limit: 1000, outcome: 'rejected_signature' })).length - before;
    expect(written).toBe(REJECTION_SAMPLES);
    h.clock.advance(61_000);
    await h.handler(githubEvent('push', PUSH, 'forged'));
    expect((await latest())).toMatchObject({ outcome: 'rejected_signature', count: 50 - REJECTION_SAMPLES + 1 });
  });
});
