/**
 * The console's HTTP side over a real local store: what each view returns, that no
 * secret value ever reaches the page, CSRF on every state change, loopback Host names,
 * the access token, and clear answers to bad input.
 */
import { checkConsoleOptions } from '../../cli/console/command';
import { jsonLogger } from '../../functions/core/log';
import { scrub, secretValuesOf, MASK } from '../../cli/console/redact';
import { ALERT_SECRET, CONFIG_TOKEN, SUB_SECRET, startConsoleFixture, type ConsoleFixture } from './fixture';

let fx: ConsoleFixture;
const logged: string[] = [];
beforeAll(async () => {
  fx = await startConsoleFixture({ logger: jsonLogger((line) => logged.push(line)) });
}, 30_000);
afterAll(async () => fx.close());

/** Opens the page like a browser: the session cookie and the CSRF token it carries. */
async function session(base = fx.url, init: RequestInit = {}) {
  const page = await fetch(`${base}/console`, init);
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
  const html = await page.text();
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(html)?.[1] ?? '';
  return { page, html, cookie, csrf };
}

const post = (path: string, headers: Record<string, string>, body = '{}') =>
  fetch(`${fx.url}/console/api${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

test('the page ships in the bundle, with a strict CSP and a per-session CSRF token', async () => {
  const { page, html, cookie, csrf } = await session();
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toContain('text/html');
  const csp = page.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toMatch(/script-src 'nonce-[^']+'/);
  expect(html).toMatch(/<script nonce="[^"]+">/);
  expect(cookie).toMatch(/^hookagent_console_session=.+/);
  expect(page.headers.get('set-cookie')).toContain('HttpOnly');
  expect(page.headers.get('set-cookie')).toContain('SameSite=Strict');
  expect(csrf.length).toBeGreaterThan(20);
  const other = await session();
  expect(other.csrf).not.toBe(csrf);
});

test('events: newest first, with model, tokens and duration; filters and free-text search', async () => {
  const answer = (await (await fetch(`${fx.url}/console/api/events`)).json()) as { events: Array<Record<string, unknown>>; next: string | null };
  const all = answer.events;
  expect(all).toHaveLength(19);
  expect(answer.next).toBeNull();
  expect(all[0]).toMatchObject({ event_id: expect.any(String), endpoint: expect.any(String), status: expect.any(String) });
  const times = all.map((e) => e.received_at as string);
  expect([...times].sort().reverse()).toEqual(times);
  const rich = all.find((e) => e.event_id === fx.rich.event_id);
  expect(rich).toMatchObject({ endpoint: 'github', event: 'pull_request', action: 'opened', subscription: 'pr-review', status: 'delivered', duration_ms: 5123, model: 'claude-sonnet-4-5', tokens: 8822 });

  const get = async (query: string) => ((await (await fetch(`${fx.url}/console/api/events?${query}`)).json()) as { events: Array<Record<string, unknown>> }).events;
  expect((await get('subscription=alerts')).every((e) => e.subscription === 'alerts' && e.endpoint === 'custom/alerts')).toBe(true);
  expect((await get('status=failed')).length).toBeGreaterThan(0);
  expect((await get('status=failed')).every((e) => e.status === 'failed')).toBe(true);
  expect((await get('endpoint=custom/alerts')).length).toBe((await get('subscription=alerts')).length);
  expect((await get(`since=${Date.now() - 3600_000}`)).every((e) => Date.parse(e.received_at as string) >= Date.now() - 3600_000 - 1000)).toBe(true);
  expect((await get('q=72d3162e-cc78')).map((e) => e.event_id)).toEqual([fx.rich.event_id]);
  expect((await get(`q=${fx.rich.event_id.slice(4, 14)}`)).map((e) => e.event_id)).toContain(fx.rich.event_id);
});

test('one event: payload, request headers (names only), candidate verdicts, prompt, transcript, reply, targets', async () => {
  const ev = (await (await fetch(`${fx.url}/console/api/events/${fx.rich.event_id}`)).json()) as Record<string, any>;
  expect(ev.payload.pull_request.title).toBe('Add retry to uploads');
  expect(ev.payload.hook.config.secret).toBe(MASK);
  expect(ev.payload.leaked).toBe(`copied ${MASK} here`);
  expect(ev.request.headers).toEqual(expect.arrayContaining([{ name: 'x-hub-signature-256', value: null }]));
  expect(ev.request.candidates).toEqual(expect.arrayContaining([expect.objectContaining({ subscription: 'alerts', matched: false })]));
  const [r] = ev.records;
  expect(r).toMatchObject({ subscription: 'pr-review', prompt: expect.stringContaining('Review the pull request'), reply: expect.stringContaining('never backs off') });
  expect(r.targets.codehost_comment.detail).toBe('https://github.test/octo/app/pull/7#issuecomment-101');
  expect(r.transcript[0].tool_call.name).toBe('http_get');
  expect(r.usage).toMatchObject({ input_tokens: 2310, output_tokens: 512 });
  const missing = await fetch(`${fx.url}/console/api/events/evt_missing`);
  expect(missing.status).toBe(404);
  expect(((await missing.json()) as { message: string }).message).toContain('keeps 14 days');
});

test('requests, subscriptions (with URLs to paste) and the 24 h chart', async () => {
  const requests = (await (await fetch(`${fx.url}/console/api/requests`)).json()) as { available: boolean; requests: Array<Record<string, unknown>> };
  expect(requests.available).toBe(true);
  expect(requests.requests.map((r) => r.outcome)).toEqual(['rejected_signature', 'accepted']);
  expect(requests.requests[0]).toMatchObject({ message: 'Signature does not match', count: 3 });
  const rejected = (await (await fetch(`${fx.url}/console/api/requests?outcome=rejected_signature`)).json()) as { requests: unknown[] };
  expect(rejected.requests).toHaveLength(1);

  const subs = (await (await fetch(`${fx.url}/console/api/subscriptions`)).json()) as Array<Record<string, any>>;
  expect(subs.map((s) => s.name).sort()).toEqual(['alerts', 'pr-review']);
  expect(subs.find((s) => s.name === 'alerts')!.urls.custom).toBe('https://hooks.example.com/webhooks/custom/alerts');
  for (const s of subs) expect(s).not.toHaveProperty('secret');
  // Held events are counted a page of summaries at a time (no payload read): past one page too.
  const held = Array.from({ length: 1_001 }, (_, i) => ({
    ...fx.rich, event_id: `evt_held_${String(i).padStart(4, '0')}`, subscription: 'alerts', status: 'held' as const,
    message: { ...fx.rich.message, event_id: `evt_held_${String(i).padStart(4, '0')}`, subscription: 'alerts' },
  }));
  await fx.events.putAll(held);
  const counted = (await (await fetch(`${fx.url}/console/api/subscriptions`)).json()) as Array<Record<string, any>>;
  expect(counted.find((s) => s.name === 'alerts')!.held).toBe((await fx.events.listByStatus('alerts', 'held')).length);
  expect(counted.find((s) => s.name === 'alerts')!.held).toBeGreaterThanOrEqual(1_001);
  await fx.events.deleteAll(held);

  const chart = (await (await fetch(`${fx.url}/console/api/chart`)).json()) as Array<Record<string, number>>;
  expect(chart).toHaveLength(24);
  const total = chart.reduce((n, b) => n + b.delivered! + b.suppressed! + b.failed! + b.other!, 0);
  expect(total).toBeGreaterThanOrEqual(17);
  expect(chart.reduce((n, b) => n + b.failed!, 0)).toBeGreaterThan(0);
});

test('no secret value is ever sent to the page: subscription secrets, config tokens, secret-named fields', async () => {
  const { html, cookie } = await session();
  const paths = ['/info', '/events', '/events?limit=1000', `/events/${fx.rich.event_id}`, '/requests', '/subscriptions', '/chart'];
  const bodies = [html, ...(await Promise.all(paths.map(async (p) => (await fetch(`${fx.url}/console/api${p}`, { headers: { cookie } })).text())))];
  for (const body of bodies) {
    for (const secret of [SUB_SECRET, ALERT_SECRET, CONFIG_TOKEN, 'payload-hook-secret-value', SUB_SECRET.slice(6)]) expect(body).not.toContain(secret);
  }
  expect(bodies.join('')).toContain(MASK);
});

test('state changes need the session CSRF token, from this origin', async () => {
  const { cookie, csrf } = await session();
  expect((await post('/subscriptions/alerts/pause', {})).status).toBe(403);
  expect((await post('/subscriptions/alerts/pause', { cookie })).status).toBe(403);
  expect((await post('/subscriptions/alerts/pause', { cookie, 'x-csrf-token': 'forged' })).status).toBe(403);
  const other = await session();
  expect((await post('/subscriptions/alerts/pause', { cookie, 'x-csrf-token': other.csrf })).status).toBe(403);
  expect((await post('/subscriptions/alerts/pause', { cookie, 'x-csrf-token': csrf, origin: 'http://evil.example' })).status).toBe(403);
  expect((await fx.subscriptions.get('alerts'))!.state).toBe('active');

  const paused = await post('/subscriptions/alerts/pause', { cookie, 'x-csrf-token': csrf });
  expect(paused.status).toBe(200);
  expect(((await paused.json()) as { messages: string[] }).messages[0]).toContain("Paused 'alerts'");
  expect((await fx.subscriptions.get('alerts'))!.state).toBe('paused');
  const resumed = await post('/subscriptions/alerts/resume', { cookie, 'x-csrf-token': csrf });
  expect(((await resumed.json()) as { messages: string[] }).messages[0]).toContain("Resumed 'alerts'");
  expect((await fx.subscriptions.get('alerts'))!.state).toBe('active');

  const replayed = (await (await post(`/events/${fx.rich.event_id}/replay`, { cookie, 'x-csrf-token': csrf })).json()) as { event_ids: string[]; messages: string[] };
  expect(replayed.event_ids).toHaveLength(1);
  expect(replayed.messages).toHaveLength(replayed.event_ids.length);
  const copy = await fx.events.get(replayed.event_ids[0]!, 'pr-review');
  expect(copy).toMatchObject({ status: 'queued', message: expect.objectContaining({ replay_of: fx.rich.event_id }) });
  const logs = logged.map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(logs).toEqual(expect.arrayContaining([
    expect.objectContaining({ message: 'console pause', subscription: 'alerts' }),
    expect.objectContaining({ message: 'console replay', event_id: fx.rich.event_id, replays: replayed.event_ids }),
  ]));
  const [queued] = await fx.queue.receive(10);
  expect((JSON.parse(queued!.body) as { replay_of: string }).replay_of).toBe(fx.rich.event_id);
  await fx.queue.delete(queued!.receiptHandle);
});

test('bad input gets a clear error and changes nothing', async () => {
  const { cookie, csrf } = await session();
  const bad = async (path: string) => {
    const response = await fetch(`${fx.url}/console/api${path}`);
    return [response.status, ((await response.json()) as { message: string }).message];
  };
  expect(await bad('/events?limit=abc')).toEqual([400, expect.stringContaining('whole number from 1 to 1000')]);
  expect(await bad('/events?status=bogus')).toEqual([400, "Unknown status 'bogus'"]);
  expect(await bad('/events?since=yesterday-ish')).toEqual([400, expect.stringContaining("'since' must be")]);
  expect(await bad('/events?cursor=%7B%7D')).toEqual([400, "Malformed 'cursor': pass the 'next' value of an earlier answer as it is"]);
  const forged = Buffer.from(JSON.stringify(['2026-11-24T10:00:00.000Z', `evt_${'x'.repeat(2000)}`, 'alerts'])).toString('base64url');
  expect(await bad(`/events?cursor=${forged}`)).toEqual([400, expect.stringContaining("Malformed 'cursor'")]);
  expect(await bad('/events?subscription=Not%20A%20Name')).toEqual([400, expect.stringContaining("'subscription' must be a subscription name")]);
  expect(await bad('/events?since=99999999999999999')).toEqual([400, expect.stringContaining("'since' must be")]);
  expect(await bad('/nope')).toEqual([404, 'No such console API']);
  const notJson = await post('/subscriptions/alerts/pause', { cookie, 'x-csrf-token': csrf }, '{not json');
  expect(notJson.status).toBe(400);
  const unknown = (await (await post('/subscriptions/ghost/pause', { cookie, 'x-csrf-token': csrf })).json()) as { code: string; message: string };
  expect(unknown).toMatchObject({ code: 'subscription_not_found', message: "No subscription named 'ghost'" });
  const replayMissing = await post('/events/evt_missing/replay', { cookie, 'x-csrf-token': csrf });
  expect(replayMissing.status).toBe(404);
  const huge = await post('/subscriptions/alerts/pause', { cookie, 'x-csrf-token': csrf }, JSON.stringify({ pad: 'x'.repeat(10_000) }));
  expect(huge.status).toBe(413);
  expect((await fx.subscriptions.get('alerts'))!.state).toBe('active');
  // A broken %-escape in the path is the request's fault (400), never a 500.
  for (const path of ['/events/%E0%A4%A', '/events/%E0%A4%A/replay', '/subscriptions/%E0%A4%A/pause']) {
    const response = path.endsWith('replay') || path.endsWith('pause') ? await post(path, { cookie, 'x-csrf-token': csrf }) : await fetch(`${fx.url}/console/api${path}`);
    expect([path, response.status]).toEqual([path, 400]);
  }
  // A refused operation (replaying an event still held) is 409 with its code, as the CLI's exit 1.
  const held = await fx.addEvent({ subscription: 'alerts', status: 'held' });
  const refused = await post(`/events/${held.event_id}/replay`, { cookie, 'x-csrf-token': csrf });
  expect(refused.status).toBe(409);
  expect(await refused.json()).toMatchObject({ code: 'event_held' });
});

test('mounted in serve (peers on this machine only): a request a proxy forwarded is not answered', async () => {
  const mounted = await startConsoleFixture({ loopbackPeersOnly: true });
  try {
    expect((await fetch(`${mounted.url}/console/api/subscriptions`)).status).toBe(200);
    for (const header of [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }, { 'x-real-ip': '203.0.113.9' }] as Array<Record<string, string>>) {
      expect((await fetch(`${mounted.url}/console/api/subscriptions`, { headers: header })).status).toBe(404);
    }
  } finally {
    await mounted.close();
  }
});

test('Host names other than loopback are refused (DNS rebinding); any 127.x.y.z address is loopback', async () => {
  const { request } = await import('node:http');
  const statusFor = (host: string) => new Promise<number>((resolve, reject) => {
    const req = request(`${fx.url}/console/api/info`, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
  expect(await statusFor('attacker.example:80')).toBe(421);
  expect(await statusFor('127.0.0.2:8645')).toBe(200);
  expect(await statusFor('127.0.0.256:8645')).toBe(421);
  expect(await statusFor('127.evil.example')).toBe(421);
});

describe('with --auth-token', () => {
  const TOKEN = 'a-long-console-token-0123456789';
  let guarded: ConsoleFixture;
  beforeAll(async () => {
    guarded = await startConsoleFixture({ authToken: TOKEN });
  }, 30_000);
  afterAll(async () => guarded.close());

  test('nothing without the token; ?token sets an HttpOnly cookie (not the token); Bearer works', async () => {
    expect((await fetch(`${guarded.url}/console`)).status).toBe(401);
    expect((await fetch(`${guarded.url}/console/api/events`)).status).toBe(401);
    expect((await fetch(`${guarded.url}/console?token=wrong`, { redirect: 'manual' })).status).toBe(401);
    const entry = await fetch(`${guarded.url}/console?token=${TOKEN}`, { redirect: 'manual' });
    expect(entry.status).toBe(303);
    const cookie = (entry.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie).toMatch(/^hookagent_console_auth_[0-9a-f]{8}=/);
    expect(cookie).not.toContain(TOKEN);
    expect((await fetch(`${guarded.url}/console`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${guarded.url}/console/api/events`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  test('--host other than loopback needs a token of some length', () => {
    expect(() => checkConsoleOptions('0.0.0.0', undefined)).toThrow(/--auth-token/);
    expect(() => checkConsoleOptions('192.168.1.5', 'short')).toThrow(/at least 16/);
    expect(() => checkConsoleOptions('0.0.0.0', TOKEN)).not.toThrow();
    expect(() => checkConsoleOptions('127.0.0.1', undefined)).not.toThrow();
    expect(() => checkConsoleOptions('localhost', undefined)).not.toThrow();
  });
});

test('scrub masks secret-named strings but keeps token counts', () => {
  const out = scrub({ usage: { input_tokens: 5 }, headers: { authorization: 'Bearer x' }, text: 'a sekret-value b' }, ['sekret-value']);
  expect(out).toEqual({ usage: { input_tokens: 5 }, headers: { authorization: MASK }, text: `a ${MASK} b` });
  expect(secretValuesOf({ delivery: { codehost: { github: { token: 'ghp_abcdef' } } }, webhooks: { github: { secret: ['s3cr3t-1'] } }, agent: { model: 'm' } }))
    .toEqual(['ghp_abcdef', 's3cr3t-1']);
});
