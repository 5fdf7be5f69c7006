/**
 * The console's answers to what callers and browsers send (hunt 8 D4, D5): a POST body that
 * is not a JSON object, or whose options have the wrong type, is a 400 that changes nothing
 * (never a 500, never a replay widened to every subscription); a cookie another app on
 * localhost set (cookies are not per port) does not lock the user out; a request-log
 * `outcome` that is no outcome is a 400, not an empty list that reads as "none".
 */
import { startConsoleFixture, type ConsoleFixture } from './fixture';

let fx: ConsoleFixture;
beforeAll(async () => { fx = await startConsoleFixture(); }, 30_000);
afterAll(async () => fx.close());

/** Opens the page like a browser: the session cookie and the CSRF token it carries. */
async function session(base = fx.url, extraCookie = '') {
  const page = await fetch(`${base}/console`, extraCookie ? { headers: { cookie: extraCookie } } : {});
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  return { cookie, csrf };
}

async function post(path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: { code?: string; message?: string; event_ids?: string[] } }> {
  const response = await fetch(`${fx.url}/console/api${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: response.status, body: (await response.json()) as { code?: string; message?: string; event_ids?: string[] } };
}

test('a POST body that is JSON but not an object (null, an array, a string, a number) is a 400', async () => {
  const { cookie, csrf } = await session();
  const answers: Array<[string, string, number, string | undefined]> = [];
  for (const body of ['null', '[]', '"x"', '5']) {
    for (const path of ['/subscriptions/alerts/pause', '/subscriptions/alerts/resume', `/events/${fx.rich.event_id}/replay`]) {
      const answer = await post(path, body, { cookie, 'x-csrf-token': csrf });
      answers.push([body, path, answer.status, answer.body.code]);
    }
  }
  expect(answers.filter(([, , status, code]) => status !== 400 || code !== 'invalid_json')).toEqual([]);
  expect((await fx.subscriptions.get('alerts'))!.state).toBe('active');
  expect((await fx.events.getEvent(fx.rich.event_id)).length).toBe(1);
});

test('a replay for one subscription whose name is not a string (or not a name) is refused, not widened to every subscription', async () => {
  const { cookie, csrf } = await session();
  // The same event for a second subscription: a replay without `subscription` would queue both.
  const second = { ...fx.rich, subscription: 'alerts', message: { ...fx.rich.message, subscription: 'alerts' } };
  await fx.events.putAll([second]);
  try {
    for (const subscription of [['alerts'], 7, null, { name: 'alerts' }, 'Not A Name']) {
      const answer = await post(`/events/${fx.rich.event_id}/replay`, JSON.stringify({ subscription }), { cookie, 'x-csrf-token': csrf });
      expect([subscription, answer.status, answer.body.event_ids?.length ?? 0]).toEqual([subscription, 400, 0]);
      expect(answer.body.message).toContain("'subscription'");
    }
    expect((await fx.events.getEvent(fx.rich.event_id)).length).toBe(2);
    // A name as a string still picks that one subscription.
    const one = await post(`/events/${fx.rich.event_id}/replay`, JSON.stringify({ subscription: 'alerts' }), { cookie, 'x-csrf-token': csrf });
    expect([one.status, one.body.event_ids?.length]).toEqual([200, 1]);
    const [queued] = await fx.queue.receive(10);
    expect(JSON.parse(queued!.body)).toMatchObject({ subscription: 'alerts', replay_of: fx.rich.event_id });
    await fx.queue.delete(queued!.receiptHandle);
    await fx.events.deleteAll([{ event_id: one.body.event_ids![0]!, subscription: 'alerts' }]);
  } finally {
    await fx.events.deleteAll([second]);
  }
});

test('a resume whose discard_held is not true or false is refused, and the subscription stays paused with its events held', async () => {
  const { cookie, csrf } = await session();
  const paused = await post('/subscriptions/alerts/pause', '{}', { cookie, 'x-csrf-token': csrf });
  expect(paused.status).toBe(200);
  const held = await fx.addEvent({ subscription: 'alerts', status: 'held' });
  try {
    for (const discard of ['true', 1, null, []]) {
      const answer = await post('/subscriptions/alerts/resume', JSON.stringify({ discard_held: discard }), { cookie, 'x-csrf-token': csrf });
      expect([discard, answer.status, answer.body.code]).toEqual([discard, 400, 'bad_request']);
      expect(answer.body.message).toContain("'discard_held'");
    }
    expect((await fx.subscriptions.get('alerts'))!.state).toBe('paused');
    expect((await fx.events.get(held.event_id, 'alerts'))!.status).toBe('held');
    const discarded = await post('/subscriptions/alerts/resume', JSON.stringify({ discard_held: true }), { cookie, 'x-csrf-token': csrf });
    expect([discarded.status, (discarded.body as { messages?: string[] }).messages]).toEqual([200, ["Resumed 'alerts'; discarded 1 held event(s)."]]);
  } finally {
    await fx.events.deleteAll([held]);
  }
});

test('a cookie another app on localhost set, with a broken %-escape, does not lock the user out', async () => {
  // E.g. a dev server on localhost:3000 that stores `progress=100%` unencoded: the browser sends it here too.
  const stray = 'progress=100%; theme=dark';
  const page = await fetch(`${fx.url}/console`, { headers: { cookie: stray } });
  expect({ status: page.status, start: (await page.text()).slice(0, 15) }).toEqual({ status: 200, start: '<!doctype html>' });
  expect((await fetch(`${fx.url}/console/api/info`, { headers: { cookie: stray } })).status).toBe(200);
  // The page's own actions work beside it (the session cookie is read, the stray one left alone).
  const { cookie, csrf } = await session(fx.url, stray);
  const paused = await post('/subscriptions/alerts/pause', '{}', { cookie: `${stray}; ${cookie}`, 'x-csrf-token': csrf });
  expect(paused.status).toBe(200);
  expect((await post('/subscriptions/alerts/resume', '{}', { cookie: `${cookie}; ${stray}`, 'x-csrf-token': csrf })).status).toBe(200);
  expect((await fx.subscriptions.get('alerts'))!.state).toBe('active');
});

test('with --auth-token, a stray cookie beside the auth cookie still lets the user in', async () => {
  const TOKEN = 'a-long-console-token-0123456789';
  const guarded = await startConsoleFixture({ authToken: TOKEN });
  try {
    const entry = await fetch(`${guarded.url}/console?token=${TOKEN}`, { redirect: 'manual' });
    const auth = (entry.headers.get('set-cookie') ?? '').split(';')[0]!;
    for (const cookie of [`progress=100%; ${auth}`, `${auth}; progress=%E0%A4%A`]) {
      expect([cookie, (await fetch(`${guarded.url}/console`, { headers: { cookie } })).status]).toEqual([cookie, 200]);
      expect([cookie, (await fetch(`${guarded.url}/console/api/events`, { headers: { cookie } })).status]).toEqual([cookie, 200]);
    }
    expect((await fetch(`${guarded.url}/console/api/events`, { headers: { cookie: 'progress=100%' } })).status).toBe(401);
  } finally {
    await guarded.close();
  }
});

test("requests?outcome= takes the request log's outcomes only: a misspelt one is a 400 naming them", async () => {
  const bogus = await fetch(`${fx.url}/console/api/requests?outcome=acepted`);
  expect(bogus.status).toBe(400);
  const body = (await bogus.json()) as { code?: string; message?: string };
  expect(body.code).toBe('bad_request');
  expect(body.message).toContain("'outcome' must be one of accepted, held,");
  expect(body.message).toContain("got 'acepted'");
  const fine = await fetch(`${fx.url}/console/api/requests?outcome=accepted`);
  expect(fine.status).toBe(200);
});

test("a 'since' past the year 9999 is a 400 (its ISO form sorted before today's and listed every event)", async () => {
  for (const since of ['+010000-01-01T00:00:00Z', String(Date.UTC(10000, 0, 1))]) {
    const answer = await fetch(`${fx.url}/console/api/events?since=${encodeURIComponent(since)}`);
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { message?: string }).message).toContain('up to the year 9999');
  }
  expect((await fetch(`${fx.url}/console/api/events?since=${Date.now() - 3_600_000}`)).status).toBe(200);
});
