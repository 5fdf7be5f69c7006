/**
 * Slack with a bot token, exactly once under retries: every post carries message metadata
 * naming its delivery, and a delivery that may have been attempted before
 * (`earlierAttempt`) reads the channel's history for it first. Found: recorded delivered
 * with its ts, not posted again. Not found, or the search impossible (missing scope, not
 * in the channel, rate limited, bad answers): posted as before, with a warning saying what
 * would prevent a duplicate. Against a local Slack Web API (tests/support/fake-slack.ts).
 */
import type { Config } from '../../functions/core/config/types';
import { CLOCK_MARGIN_MS, DELIVERY_EVENT_TYPE, LOOKUP_PAGE_SIZE } from '../../functions/core/delivery/slack-lookup';
import type { DeliveryOutcome, DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import type { Logger, LogFields } from '../../functions/core/log';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack';
import { startLocalServer } from '../support/local-http';

let slack: FakeSlack;
beforeAll(async () => {
  slack = await startFakeSlack();
});
afterAll(() => slack.close());

const waits: number[] = [];
const sleep = async (ms: number) => void waits.push(ms);
const warnings: Array<{ message: string; fields?: LogFields }> = [];
const logger: Logger = { debug() {}, info() {}, warn: (message, fields) => void warnings.push({ message, fields }), error() {}, child: () => logger };

beforeEach(() => {
  slack.reset();
  waits.length = 0;
  warnings.length = 0;
});

const RECEIVED = new Date(Date.now() - 60_000).toISOString();

function settings(channel = 'C0OPS', extra: Partial<NonNullable<Config['delivery']['teamchat']>> = {}): Config['delivery'] {
  return { timeout_ms: 2_000, codehost: {}, teamchat: { provider: 'slack', bot_token: slack.token, channel, api_url: slack.apiUrl, ...extra } };
}

function request(eventId: string, options: { earlier?: boolean; subscription?: string; delivery?: Config['delivery'] } = {}): DeliveryRequest {
  const name = options.subscription ?? 'alerts';
  return {
    subscription: { name, events: [], skills: [], deliver: ['teamchat'], state: 'active', created_at: '', updated_at: '', secret: 'whsec_SECRET' },
    message: { v: 1, event_id: eventId, subscription: name, source: 'custom', event: 'alert', delivery_id: `d-${eventId}`, received_at: RECEIVED, payload: { host: 'db1', token: 'PAYLOAD_VALUE' } },
    payload: { host: 'db1', token: 'PAYLOAD_VALUE' }, reply: `Disk full on db1 (${eventId}).`, settings: options.delivery ?? settings(), logger,
    ...(options.earlier ? { earlierAttempt: { since: RECEIVED } } : {}),
  };
}

async function deliver(req: DeliveryRequest): Promise<DeliveryOutcome> {
  return createDeliveryTargets(req.settings, sleep).teamchat.deliver(req);
}

/** A first attempt whose post reached Slack but whose answer was lost (a kill -9 would lose it the same way). */
async function postLandedAnswerLost(eventId: string, options: { subscription?: string; delivery?: Config['delivery'] } = {}) {
  slack.script['chat.postMessage'].push({ kind: 'keep_then_reset' });
  const first = await deliver(request(eventId, options));
  expect(first).toMatchObject({ status: 'failed', code: 'network_error' });
  expect(slack.posts.filter((p) => (p.body.text as string).includes(eventId))).toHaveLength(1);
}

const postsOf = (eventId: string) => slack.posts.filter((p) => (p.body.text as string).includes(`(${eventId})`));

describe('every bot-token post names its delivery in its metadata', () => {
  test('a first attempt posts once, with metadata, and reads no history', async () => {
    const outcome = await deliver(request('evt_first'));
    expect(slack.historyCalls).toEqual([]);
    expect(slack.posts).toHaveLength(1);
    const [post] = slack.posts;
    expect(outcome).toEqual({ status: 'delivered', detail: `channel C0OPS ts ${post!.message.ts}` });
    expect(post!.body.metadata).toEqual({ event_type: DELIVERY_EVENT_TYPE, event_payload: { event_id: 'evt_first', subscription: 'alerts', target: 'teamchat' } });
    // Nothing secret and nothing from the payload travels in it.
    const sent = JSON.stringify(post!.body.metadata);
    expect(sent).not.toContain('PAYLOAD_VALUE');
    expect(sent).not.toContain(slack.token);
    expect(sent).not.toContain('whsec_SECRET');
    expect(warnings).toEqual([]);
  });

  test('an incoming webhook carries no metadata and reads nothing, even on a retry (nothing to search)', async () => {
    const hook = await startLocalServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
    try {
      const delivery: Config['delivery'] = { timeout_ms: 2_000, codehost: {}, teamchat: { provider: 'slack', webhook_url: `${hook.url}/services/T/B/X`, api_url: slack.apiUrl } };
      expect(await deliver({ ...request('evt_hook', { earlier: true }), settings: delivery })).toEqual({ status: 'delivered', detail: 'incoming webhook' });
      expect(hook.requests.map((r) => r.url)).toEqual(['/services/T/B/X']);
      expect(JSON.parse(hook.requests[0]!.body)).not.toHaveProperty('metadata');
      expect(slack.server.requests).toEqual([]);
    } finally {
      await hook.close();
    }
  });
});

describe('a delivery that may have been attempted before', () => {
  test('its earlier post landed: found by its metadata, recorded delivered with that ts, not posted again', async () => {
    await postLandedAnswerLost('evt_landed');
    const outcome = await deliver(request('evt_landed', { earlier: true }));
    const [post] = slack.posts;
    expect(slack.posts).toHaveLength(1);
    expect(outcome).toEqual({ status: 'delivered', detail: `channel C0OPS ts ${post!.message.ts} (posted by an earlier attempt, found by its metadata)` });
    expect(slack.historyCalls).toHaveLength(1);
    const call = slack.historyCalls[0]!;
    expect(call).toMatchObject({ channel: 'C0OPS', include_all_metadata: 'true', limit: String(LOOKUP_PAGE_SIZE) });
    // From shortly before the event arrived: nothing of this delivery can be older.
    expect(Number(call.oldest)).toBeCloseTo((Date.parse(RECEIVED) - CLOCK_MARGIN_MS) / 1000, 3);
    const wire = slack.server.requests.find((r) => r.url.startsWith('/api/conversations.history'))!;
    expect(wire.method).toBe('GET');
    expect(wire.headers.authorization).toBe(`Bearer ${slack.token}`);
    expect(warnings).toEqual([]);
  });

  test('its earlier post never landed: the history is read, nothing found, posted once', async () => {
    slack.script['chat.postMessage'].push({ kind: 'drop' });
    expect(await deliver(request('evt_lost'))).toMatchObject({ status: 'failed', code: 'network_error' });
    expect(slack.posts).toHaveLength(0);
    const outcome = await deliver(request('evt_lost', { earlier: true }));
    expect(slack.historyCalls).toHaveLength(1);
    expect(postsOf('evt_lost')).toHaveLength(1);
    expect(outcome).toEqual({ status: 'delivered', detail: `channel C0OPS ts ${slack.posts[0]!.message.ts}` });
    expect(warnings).toEqual([]);
  });

  test('another event, another subscription, another app: their metadata is not taken for this delivery', async () => {
    await postLandedAnswerLost('evt_other');
    await postLandedAnswerLost('evt_mine', { subscription: 'other-sub' });
    slack.seed('C0OPS', 1, () => ({ bot_id: 'B0ELSE', metadata: { event_type: 'task_created', event_payload: { event_id: 'evt_mine', subscription: 'alerts', target: 'teamchat' } } }));
    slack.seed('C0OPS', 1, () => ({ metadata: { event_type: DELIVERY_EVENT_TYPE, event_payload: { event_id: 'evt_mine', subscription: 'alerts', target: 'messenger' } } }));
    slack.seed('C0OPS', 1, () => ({ metadata: { event_type: DELIVERY_EVENT_TYPE, event_payload: { event_id: 'evt_mine_2', subscription: 'alerts', target: 'teamchat' } } }));
    const before = slack.posts.length;
    const outcome = await deliver(request('evt_mine', { earlier: true }));
    expect(outcome.status).toBe('delivered');
    expect(slack.posts).toHaveLength(before + 1);
    expect(slack.posts.at(-1)!.body.metadata).toEqual({ event_type: DELIVERY_EVENT_TYPE, event_payload: { event_id: 'evt_mine', subscription: 'alerts', target: 'teamchat' } });
  });

  test('found across pages: the cursor is followed, newest first', async () => {
    await postLandedAnswerLost('evt_paged');
    slack.seed('C0OPS', LOOKUP_PAGE_SIZE * 2 + 50);
    const outcome = await deliver(request('evt_paged', { earlier: true }));
    expect(slack.posts).toHaveLength(1);
    expect(outcome).toMatchObject({ status: 'delivered', detail: expect.stringContaining(`ts ${slack.posts[0]!.message.ts}`) });
    expect(slack.historyCalls).toHaveLength(3);
    expect(slack.historyCalls[0]!.cursor).toBeUndefined();
    expect(slack.historyCalls[1]!.cursor).toEqual(expect.any(String));
    expect(slack.historyCalls[2]!.cursor).toEqual(expect.any(String));
    expect(slack.historyCalls[2]!.cursor).not.toBe(slack.historyCalls[1]!.cursor);
  });

  test('the search stops after a few pages: beyond them, posted anyway with a warning', async () => {
    await postLandedAnswerLost('evt_deep');
    slack.seed('C0OPS', LOOKUP_PAGE_SIZE * 3 + 10);
    const outcome = await deliver(request('evt_deep', { earlier: true }));
    expect(outcome.status).toBe('delivered');
    expect(slack.historyCalls).toHaveLength(3);
    expect(postsOf('evt_deep')).toHaveLength(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.fields).toMatchObject({ reason: expect.stringContaining(`read ${LOOKUP_PAGE_SIZE * 3} messages`) });
  });

  test('the whole history read without the post: posted, no warning', async () => {
    slack.seed('C0OPS', 30);
    await deliver(request('evt_none', { earlier: true }));
    expect(slack.historyCalls).toHaveLength(1);
    expect(postsOf('evt_none')).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  test.each([
    ['channels:history', 'C0OPS'],
    ['groups:history', 'G0PRIVATE'],
  ])('missing_scope (%s): posted anyway, and the warning names the scope that would prevent duplicates', async (scope, channel) => {
    const delivery = settings(channel);
    await postLandedAnswerLost('evt_scope', { delivery });
    slack.scopes.delete(scope);
    const outcome = await deliver(request('evt_scope', { earlier: true, delivery }));
    expect(outcome.status).toBe('delivered');
    expect(postsOf('evt_scope')).toHaveLength(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toBe('teamchat_earlier_post_unknown');
    expect(warnings[0]!.fields).toMatchObject({ event_id: 'evt_scope', subscription: 'alerts', reason: expect.stringContaining(`missing_scope: the bot token lacks ${scope}`), prevent: expect.stringContaining('channels:history') });
    expect(JSON.stringify(warnings)).not.toContain(slack.token);
  });

  test('not_in_channel: posted anyway, the warning says the bot must be in the channel', async () => {
    const delivery = settings('C0NOTMEMBER');
    slack.memberOf.delete('C0NOTMEMBER');
    const outcome = await deliver(request('evt_member', { earlier: true, delivery }));
    expect(outcome.status).toBe('delivered');
    expect(postsOf('evt_member')).toHaveLength(1);
    expect(warnings[0]!.fields).toMatchObject({ reason: expect.stringContaining('not_in_channel'), prevent: expect.stringContaining('the bot must be in the channel') });
  });

  test('a channel given by name (#ops): no history call (it needs the ID), posted, with a warning', async () => {
    const delivery = settings('#ops');
    await deliver(request('evt_named', { earlier: true, delivery }));
    expect(slack.historyCalls).toEqual([]);
    expect(postsOf('evt_named')).toHaveLength(1);
    expect(warnings[0]!.fields).toMatchObject({ reason: expect.stringContaining('#ops is a name') });
  });

  test('rate limited briefly (Retry-After 1): waited out, then found', async () => {
    await postLandedAnswerLost('evt_429');
    slack.script['conversations.history'].push({ kind: 'rate_limited', retryAfterSeconds: 1 });
    const outcome = await deliver(request('evt_429', { earlier: true }));
    expect(waits).toEqual([1000]);
    expect(slack.historyCalls).toHaveLength(2);
    expect(outcome).toMatchObject({ status: 'delivered', detail: expect.stringContaining('posted by an earlier attempt') });
    expect(slack.posts).toHaveLength(1);
  });

  test('rate limited for long (Retry-After 60): no long wait, posted anyway with a warning', async () => {
    await postLandedAnswerLost('evt_429_long');
    slack.script['conversations.history'].push({ kind: 'rate_limited', retryAfterSeconds: 60 });
    const outcome = await deliver(request('evt_429_long', { earlier: true }));
    expect(waits).toEqual([]);
    expect(outcome.status).toBe('delivered');
    expect(postsOf('evt_429_long')).toHaveLength(2);
    expect(warnings[0]!.fields).toMatchObject({ reason: expect.stringContaining('rate_limited') });
  });

  test.each<[string, Parameters<FakeSlack['script']['conversations.history']['push']>[0]]>([
    ['not JSON', { kind: 'raw', status: 200, body: '<html>gateway</html>', contentType: 'text/html' }],
    ['a JSON array', { kind: 'answer', status: 200, body: [1, 2] }],
    ['ok:true without messages', { kind: 'answer', status: 200, body: { ok: true } }],
    ['an unknown error', { kind: 'answer', status: 200, body: { ok: false, error: 'team_access_not_granted' } }],
    ['has_more without a cursor', { kind: 'answer', status: 200, body: { ok: true, messages: [], has_more: true } }],
    ['a 404', { kind: 'answer', status: 404, body: { ok: false, error: 'unknown_method' } }],
  ])('a bad answer (%s): posted anyway with a warning, nothing thrown', async (_name, answer) => {
    slack.script['conversations.history'].push(answer);
    const outcome = await deliver(request('evt_bad', { earlier: true }));
    expect(outcome.status).toBe('delivered');
    expect(postsOf('evt_bad')).toHaveLength(1);
    expect(warnings).toHaveLength(1);
  });

  test('a 5xx twice: posted anyway with a warning', async () => {
    slack.script['conversations.history'].push({ kind: 'answer', status: 503, body: { ok: false, error: 'service_unavailable' } }, { kind: 'answer', status: 503, body: { ok: false, error: 'service_unavailable' } });
    const outcome = await deliver(request('evt_503', { earlier: true }));
    expect(outcome.status).toBe('delivered');
    expect(slack.historyCalls).toHaveLength(2);
    expect(warnings[0]!.fields).toMatchObject({ reason: expect.stringContaining('http_503') });
  });

  test('malformed messages in the history are skipped; the real match after them is found', async () => {
    await postLandedAnswerLost('evt_messy');
    const ts = slack.posts[0]!.message.ts;
    slack.script['conversations.history'].push({
      kind: 'answer', status: 200, body: {
        ok: true, has_more: false, messages: [
          null, 'text', { ts: 5 }, { ts: '1.1', metadata: 'x' }, { ts: '1.2', metadata: { event_type: DELIVERY_EVENT_TYPE } },
          { ts: '1.3', metadata: { event_type: DELIVERY_EVENT_TYPE, event_payload: 'evt_messy' } },
          { metadata: { event_type: DELIVERY_EVENT_TYPE, event_payload: { event_id: 'evt_messy', subscription: 'alerts', target: 'teamchat' } } },
          { ts, metadata: { event_type: DELIVERY_EVENT_TYPE, event_payload: { event_id: 'evt_messy', subscription: 'alerts', target: 'teamchat' } } },
        ],
      },
    });
    const outcome = await deliver(request('evt_messy', { earlier: true }));
    expect(outcome).toMatchObject({ status: 'delivered', detail: expect.stringContaining(`ts ${ts} (posted by an earlier attempt`) });
    expect(slack.posts).toHaveLength(1);
  });

  test('metadata comes only with include_all_metadata: the fake hides it otherwise (the search asks for it)', async () => {
    await postLandedAnswerLost('evt_meta');
    const answer = await fetch(`${slack.apiUrl}/conversations.history?channel=C0OPS`, { headers: { authorization: `Bearer ${slack.token}` } });
    const body = (await answer.json()) as { messages: Array<Record<string, unknown>> };
    expect(body.messages[0]).not.toHaveProperty('metadata');
    expect(await deliver(request('evt_meta', { earlier: true }))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('earlier attempt') });
  });
});

describe('a first attempt answered with a 5xx: the in-place retry searches before posting again', () => {
  const gateway503 = { kind: 'keep_then_answer' as const, status: 503, body: { ok: false, error: 'service_unavailable' } };

  test('the post had arrived (a gateway 503 after Slack made it): found, not posted again', async () => {
    slack.script['chat.postMessage'].push(gateway503);
    const outcome = await deliver(request('evt_gw'));
    expect(postsOf('evt_gw')).toHaveLength(1);
    expect(slack.server.requests.filter((r) => r.url === '/api/chat.postMessage')).toHaveLength(1);
    expect(slack.historyCalls).toHaveLength(1);
    expect(outcome).toEqual({ status: 'delivered', detail: `channel C0OPS ts ${slack.posts[0]!.message.ts} (answered with a 5xx, then found by its metadata)` });
    // Searched from shortly before this attempt (there was no earlier one).
    expect(Number(slack.historyCalls[0]!.oldest)).toBeGreaterThan((Date.parse(RECEIVED) - CLOCK_MARGIN_MS) / 1000);
    expect(waits).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  test('it had not arrived (a 500 from Slack itself): the history holds nothing, posted again, once', async () => {
    slack.script['chat.postMessage'].push({ kind: 'answer', status: 500, body: { ok: false, error: 'internal_error' } });
    const outcome = await deliver(request('evt_500'));
    expect(slack.historyCalls).toHaveLength(1);
    expect(postsOf('evt_500')).toHaveLength(1);
    expect(outcome).toEqual({ status: 'delivered', detail: `channel C0OPS ts ${slack.posts[0]!.message.ts}` });
    expect(warnings).toEqual([]);
  });

  test('the search cannot be made (no channels:history): posted again, with a warning naming the scope', async () => {
    slack.scopes.delete('channels:history');
    slack.script['chat.postMessage'].push(gateway503);
    const outcome = await deliver(request('evt_noscope'));
    expect(outcome).toMatchObject({ status: 'delivered' });
    // The duplicate this cannot prevent, said plainly.
    expect(postsOf('evt_noscope')).toHaveLength(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toBe('teamchat_earlier_post_unknown');
    expect(warnings[0]!.fields).toMatchObject({ reason: expect.stringContaining('channels:history'), effect: expect.stringContaining('5xx') });
  });

  test('5xx on every attempt: a retryable failure for the queue, each resend searched first, nothing posted twice', async () => {
    for (let i = 0; i < 3; i++) slack.script['chat.postMessage'].push({ kind: 'answer', status: 502, body: { ok: false, error: 'bad_gateway' } });
    const outcome = await deliver(request('evt_down'));
    expect(outcome).toMatchObject({ status: 'failed', retryable: true, code: 'http_502' });
    expect(slack.server.requests.filter((r) => r.url === '/api/chat.postMessage')).toHaveLength(3);
    expect(slack.historyCalls).toHaveLength(2);
    expect(slack.posts).toHaveLength(0);
  });
});
