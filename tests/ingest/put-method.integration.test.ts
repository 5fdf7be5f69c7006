/**
 * Grafana's webhook contact point may send with PUT (its "HTTP Method" option, `httpMethod`:
 * POST or PUT). Custom endpoints take PUT exactly as POST: the same checks, dedup, routing
 * and request log (which records the method). GitHub and GitLab always POST, so PUT stays
 * 405 there; other methods stay 405 everywhere. Through the ingest Lambda's handler over
 * real stores (dynalite).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { apiEvent } from '../support/requests';
import { GITHUB_SECRET, GITLAB_SECRET, bodyOf, type Harness, useIngestHarness } from '../support/ingest-harness';

const GRAFANA = readFileSync(join(__dirname, '..', 'fixtures', 'alerts', 'grafana.json'), 'utf8');

let h: Harness;
useIngestHarness((started) => {
  h = started;
});

const send = (method: string, path: string, body: string | Buffer | undefined, headers: Record<string, string> = {}) =>
  h.handler(apiEvent({ method, path, body, headers: { 'content-type': 'application/json', ...headers } }));

/** The answer without the ids that differ per request. */
const shape = (result: { statusCode?: number; headers?: Record<string, unknown>; body?: string }) => {
  const { event_id: _e, delivery_id: _d, ...rest } = bodyOf(result);
  return { status: result.statusCode, body: rest, allow: result.headers?.allow, retryAfter: result.headers?.['retry-after'] };
};

describe('PUT on a custom endpoint is POST', () => {
  test('a Grafana alert sent with PUT is accepted and queued exactly like the POST; the request log says PUT', async () => {
    const sub = await h.addSubscription({ name: 'grafana', events: ['alert.firing'] });
    const auth = { authorization: `Bearer ${sub.secret}` };
    const put = await send('PUT', '/webhooks/custom/grafana', GRAFANA, auth);
    expect(put.statusCode).toBe(202);
    const putBody = bodyOf(put);
    expect(putBody).toMatchObject({ status: 'accepted', event: 'alert', subscriptions: ['grafana'] });
    const post = await send('POST', '/webhooks/custom/grafana', GRAFANA, auth);
    expect(shape(put)).toEqual(shape(post));

    // The same message either way: event, action, payload.
    expect(h.queue.sent).toHaveLength(2);
    const [viaPut, viaPost] = h.queue.sent;
    expect(viaPut).toMatchObject({ subscription: 'grafana', source: 'custom', event: 'alert', action: 'firing' });
    expect(viaPut?.payload).toEqual(JSON.parse(GRAFANA));
    expect({ ...viaPut, event_id: '', delivery_id: '', received_at: '' }).toEqual({ ...viaPost, event_id: '', delivery_id: '', received_at: '' });
    const records = await h.events.getEvent(putBody.event_id as string);
    expect(records.map((r) => [r.subscription, r.status])).toEqual([['grafana', 'queued']]);

    const logged = await h.requests.list({ limit: 100, endpoint: 'custom/grafana' });
    expect(logged.map((e) => `${e.method} ${e.status} ${e.outcome}`).sort()).toEqual(['POST 202 accepted', 'PUT 202 accepted']);
    expect(logged.find((e) => e.method === 'PUT')).toMatchObject({ event: 'alert', action: 'firing', event_id: putBody.event_id });
  });

  test('dedup spans both methods: a PUT after a POST with the same delivery id is a duplicate', async () => {
    const sub = await h.addSubscription({ name: 'dedup', events: [] });
    const headers = { authorization: `Bearer ${sub.secret}`, 'x-request-id': 'grafana-retry-1' };
    expect(bodyOf(await send('POST', '/webhooks/custom/dedup', GRAFANA, headers))).toMatchObject({ status: 'accepted', delivery_id: 'grafana-retry-1' });
    const again = await send('PUT', '/webhooks/custom/dedup', GRAFANA, headers);
    expect(again.statusCode).toBe(200);
    expect(bodyOf(again)).toEqual({ status: 'duplicate', delivery_id: 'grafana-retry-1' });
    expect(h.queue.sent).toHaveLength(1);
  });

  test('routing, filters and pauses answer the same for PUT: not handled, held', async () => {
    const other = await h.addSubscription({ name: 'resolved-only', events: ['alert.resolved'] });
    const paused = await h.addSubscription({ name: 'paused', events: [], state: 'paused' });
    for (const [name, secret] of [['resolved-only', other.secret], ['paused', paused.secret]] as const) {
      const auth = { authorization: `Bearer ${secret}` };
      expect(shape(await send('PUT', `/webhooks/custom/${name}`, GRAFANA, auth))).toEqual(shape(await send('POST', `/webhooks/custom/${name}`, GRAFANA, auth)));
    }
    expect(bodyOf(await send('PUT', '/webhooks/custom/resolved-only', GRAFANA, { authorization: `Bearer ${other.secret}` }))).toMatchObject({ status: 'ignored', reason: 'Event not handled' });
    expect(bodyOf(await send('PUT', '/webhooks/custom/paused', GRAFANA, { authorization: `Bearer ${paused.secret}` }))).toMatchObject({ status: 'held' });
    expect(h.queue.sent).toHaveLength(0);
  });

  test('bad input gets the same answer with PUT as with POST', async () => {
    const sub = await h.addSubscription({ name: 'strict', events: [] });
    const good = { authorization: `Bearer ${sub.secret}` };
    const cases: Array<[string, string, string | Buffer | undefined, Record<string, string>]> = [
      ['wrong bearer', '/webhooks/custom/strict', GRAFANA, { authorization: 'Bearer whsec_wrong' }],
      ['bad hub signature', '/webhooks/custom/strict', GRAFANA, { 'x-hub-signature-256': signHub(`${GRAFANA} `, sub.secret) }],
      ['no credentials', '/webhooks/custom/strict', GRAFANA, {}],
      ['not JSON', '/webhooks/custom/strict', 'alert: firing', good],
      ['a JSON array', '/webhooks/custom/strict', '[1,2]', good],
      ['no body', '/webhooks/custom/strict', undefined, good],
      ['invalid UTF-8', '/webhooks/custom/strict', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), good],
      ['unknown subscription', '/webhooks/custom/nobody', GRAFANA, good],
      ['odd name', '/webhooks/custom/..%2Fx', GRAFANA, good],
      ['too large', '/webhooks/custom/strict', JSON.stringify({ pad: 'x'.repeat(70_000) }), good],
    ];
    for (const [what, path, body, headers] of cases) {
      const post = shape(await send('POST', path, body, headers));
      const put = shape(await send('PUT', path, body, headers));
      expect({ what, ...put }).toEqual({ what, ...post });
      expect(put.status).toBeGreaterThanOrEqual(400);
    }
    expect(h.queue.sent).toHaveLength(0);
    // Rejections are logged with their method too.
    const logged = await h.requests.list({ limit: 100, endpoint: 'custom/strict', outcome: 'rejected_signature' });
    expect(new Set(logged.map((e) => e.method))).toEqual(new Set(['POST', 'PUT']));
  });
});

describe('PUT elsewhere, and other methods, stay 405 with JSON and an Allow header', () => {
  test('PUT to /webhooks/github and /webhooks/gitlab → 405, Allow: POST (those senders always POST); nothing queued', async () => {
    await h.addSubscription({ name: 'all', events: ['*'] });
    const body = JSON.stringify({ zen: 'x', hook_id: 1 });
    const github = await send('PUT', '/webhooks/github', body, { 'x-github-event': 'ping', 'x-hub-signature-256': signHub(body, GITHUB_SECRET) });
    expect(github.statusCode).toBe(405);
    expect(github.headers?.allow).toBe('POST');
    expect(bodyOf(github)).toEqual({ status: 'error', code: 'method_not_allowed', message: 'Method not allowed; use POST' });
    const gitlab = await send('PUT', '/webhooks/gitlab', '{"object_kind":"push"}', { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': GITLAB_SECRET });
    expect(gitlab.statusCode).toBe(405);
    expect(gitlab.headers?.allow).toBe('POST');
    expect(h.queue.sent).toHaveLength(0);
  });

  test('DELETE, PATCH and GET on a custom endpoint → 405, Allow: POST, PUT', async () => {
    const sub = await h.addSubscription({ name: 'grafana', events: [] });
    for (const method of ['DELETE', 'PATCH', 'GET', 'OPTIONS']) {
      const result = await send(method, '/webhooks/custom/grafana', method === 'GET' ? undefined : GRAFANA, { authorization: `Bearer ${sub.secret}` });
      expect({ method, status: result.statusCode, allow: result.headers?.allow, body: bodyOf(result) }).toEqual({
        method, status: 405, allow: 'POST, PUT', body: { status: 'error', code: 'method_not_allowed', message: 'Method not allowed; use POST, PUT' },
      });
    }
    expect(h.queue.sent).toHaveLength(0);
    const logged = await h.requests.list({ limit: 100, endpoint: 'custom/grafana', outcome: 'method_not_allowed' });
    expect(logged.map((e) => e.method).sort()).toEqual(['DELETE', 'GET', 'OPTIONS', 'PATCH']);
  });

  test('a lower-case put is PUT (methods are compared in upper case, as before)', async () => {
    const sub = await h.addSubscription({ name: 'lower', events: [] });
    expect((await send('put', '/webhooks/custom/lower', GRAFANA, { authorization: `Bearer ${sub.secret}` })).statusCode).toBe(202);
  });
});
