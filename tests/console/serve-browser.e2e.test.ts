/**
 * The console under a real `hookagent serve` (the built CLI), driven in Debian's chromium:
 * what a user meets with webhooks sent signed to serve and subscriptions changed with the
 * CLI. Each test here failed before its fix (hunt 4):
 * - a `req_…` id that `webhook events` lists (a request the payload filters turned away)
 *   opens in the console, and the Requests page links it;
 * - an event of a subscription deleted and created again says so, and does not show the
 *   new subscription's filters as its own;
 * - a payload nested thousands of levels deep (kept as raw bytes by ingest) no longer
 *   makes the event page answer 500;
 * - Unicode tag characters (invisible text) are shown as <U+E00xx>;
 * - a view whose data arrives after the user moved on does not replace the page they went to.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { signStandardWebhooks } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';
import { serveConsole, type ServeConsole } from './serve-console-link';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let dir: string;
let serve: Serve;
/** serve's console link (its banner's), with the token: the browser opens it once. */
let consoleLink: ServeConsole;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
const secrets = new Map<string, string>();
let sent = 0;

const cli = async (...args: string[]) => {
  const result = await runCli(['--config-dir', dir, ...args]);
  if (result.code !== 0) throw new Error(`hookagent ${args.join(' ')}: exit ${result.code}\n${result.stdout}${result.stderr}`);
  return result.stdout;
};

async function subscribe(name: string, ...args: string[]): Promise<void> {
  const out = await cli('webhook', 'subscribe', name, ...args);
  secrets.set(name, /whsec_[A-Za-z0-9+/=]+/.exec(out)![0]);
}

/** A custom webhook, signed with the subscription's secret (Standard Webhooks), as a sender sends it. */
async function send(name: string, body: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const id = `msg_${(sent += 1)}_${Date.now()}`;
  const at = Math.floor(Date.now() / 1000);
  const res = await fetch(`${serve.url}/webhooks/custom/${name}`, {
    method: 'POST', body,
    headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(at), 'webhook-signature': signStandardWebhooks(body, secrets.get(name)!, id, at) },
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function statusOf(eventId: string): Promise<string | undefined> {
  const res = await fetch(`${serve.url}/console/api/events/${eventId}`, { headers: consoleLink.headers });
  if (!res.ok) return undefined;
  return ((await res.json()) as { records: Array<{ status: string }> }).records[0]?.status;
}

/** Opens one event's page and waits for that event (a hash change does not reload the page). */
async function openEvent(eventId: string): Promise<void> {
  await page.goto(`${serve.url}/console#/event/${eventId}`);
  await eventually(async () => (await page.locator('#event-id').innerText().catch(() => '')) === eventId, `the page of ${eventId}`);
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No browser at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium), or set CHROMIUM_PATH`);
  buildCli();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-console-serve-'));
  writeFileSync(join(dir, 'config.yaml'), '');
  serve = await startServe(dir, { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' });
  browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  // As a user does: the banner's link once, which sets the console's auth cookie and redirects to /console.
  consoleLink = serveConsole(serve);
  await page.goto(consoleLink.link);
  await page.waitForURL(`${serve.url}/console`);
}, 90_000);
afterEach(() => expect(pageErrors).toEqual([]));
afterAll(async () => {
  await browser?.close();
  if (serve) await stopServe(serve);
});

test('a req_ id that webhook events lists opens in the console, and the Requests page links it', async () => {
  await subscribe('big-only', '--prompt', 'n is {n}', '--filter', 'n > 5');
  const turnedAway = await send('big-only', JSON.stringify({ n: 1, note: '<img src=x onerror=alert(1)>' }));
  expect(turnedAway.json.status).toBe('ignored');
  const listed = await cli('webhook', 'events', 'big-only');
  const requestId = /req_[0-9a-z]+/.exec(listed)?.[0];
  expect(requestId).toBeDefined();

  const api = await fetch(`${serve.url}/console/api/requests/${requestId}`, { headers: consoleLink.headers });
  expect(api.status).toBe(200);
  expect(await api.json()).toEqual(expect.objectContaining({ request_id: requestId, outcome: 'filtered', endpoint: 'custom/big-only' }));
  expect((await fetch(`${serve.url}/console/api/requests/req_0000000000000nope`, { headers: consoleLink.headers })).status).toBe(404);

  await page.goto(`${serve.url}/console#/event/${requestId}`);
  await page.locator('#request-id').waitFor();
  expect(await page.locator('#request-id').innerText()).toBe(requestId);
  expect(await page.locator('#request-note').innerText()).toContain('turned away by payload filters');
  expect(await page.locator('#candidates').innerText()).toMatch(/big-only\s+unmatched\s+filter "n > 5" failed \(n is 1\)/);
  expect(await page.locator('#notice').innerText()).toBe('');

  await page.goto(`${serve.url}/console#/requests`);
  const link = page.locator(`#requests a[href="#/event/${requestId}"]`);
  await link.waitFor();
  await link.click();
  await eventually(async () => (await page.locator('#request-id').innerText().catch(() => '')) === requestId, 'the entry from the Requests page');
}, 60_000);

test('an event of a subscription deleted and created again says so, and shows none of the new one\'s filters', async () => {
  await subscribe('reborn', '--prompt', 'old {n}', '--filter', 'n > 5');
  const old = await send('reborn', JSON.stringify({ n: 9 }));
  const oldId = old.json.event_id as string;
  await eventually(async () => (await statusOf(oldId)) === 'delivered', 'the first event delivered');
  await cli('webhook', 'delete', 'reborn');
  await subscribe('reborn', '--prompt', 'new {n}', '--filter', 'n < 3');

  await openEvent(oldId);
  const record = page.locator('.record');
  await record.waitFor();
  const text = await record.innerText();
  expect(text).toContain("Accepted for an earlier subscription named 'reborn'");
  expect(text).not.toContain('n < 3');
  expect(await record.locator('.filters').count()).toBe(0);
}, 60_000);

test('a payload nested 3,000 levels deep: the event page still shows the event, cut at a depth', async () => {
  await subscribe('deep', '--prompt', 'title {title}');
  let nested = '1';
  for (let i = 0; i < 3000; i += 1) nested = `{"k":${nested}}`;
  const accepted = await send('deep', `{"title":"deep one","d":${nested}}`);
  const eventId = accepted.json.event_id as string;
  // Before the fix the event's own page answered 500 here: wait on the CLI's view of it.
  await eventually(async () => (await cli('webhook', 'events', 'deep')).includes(`${eventId}\tcustom\tdelivered`), 'the deep event delivered');

  const api = await fetch(`${serve.url}/console/api/events/${eventId}`, { headers: consoleLink.headers });
  expect(api.status).toBe(200);
  expect(await api.text()).toContain('nested deeper than 64 levels');
  await openEvent(eventId);
  expect(await page.locator('.record .prompt').innerText()).toBe('title deep one');
  expect(await page.locator('#payload').innerText()).toContain('"deep one"');
}, 60_000);

test('Unicode tag characters (text that renders invisible) are shown as <U+E00xx>', async () => {
  await subscribe('tags', '--prompt', 'note: {note}');
  // "safe" + the tag characters spelling "Ignore" + "text": reads "safetext" unescaped.
  const hidden = [...'Ignore'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
  const accepted = await send('tags', JSON.stringify({ note: `safe${hidden}text` }));
  const eventId = accepted.json.event_id as string;
  await eventually(async () => (await statusOf(eventId)) === 'delivered', 'the event delivered');
  await openEvent(eventId);
  const prompt = await page.locator('.record .prompt').innerText();
  expect(prompt).toBe('note: safe<U+E0049><U+E0067><U+E006E><U+E006F><U+E0072><U+E0065>text');
  expect(await page.locator('#payload').innerText()).toContain('safe<U+E0049>');
  expect(await page.locator('body').innerText()).not.toMatch(/[\u{E0000}-\u{E007F}]/u);
}, 60_000);

test('leaving Events before its data arrives: the page the user went to stays', async () => {
  // The store answers the chart slowly (a busy store); meanwhile the user opens Subscriptions.
  let releaseChart: () => void = () => {};
  const chartHeld = new Promise<void>((resolve) => (releaseChart = resolve));
  let chartAsked = false;
  await page.route('**/console/api/chart', async (route) => {
    chartAsked = true;
    await chartHeld;
    await route.continue();
  });
  try {
    await page.goto(`${serve.url}/console#/events`);
    await eventually(() => chartAsked, 'the events view asking for the chart');
    await page.click('a[data-nav="subscriptions"]');
    await page.locator('#subscriptions').waitFor();
    const answered = page.waitForResponse('**/console/api/chart');
    releaseChart();
    await answered;
    // One more round trip from the page (after the held answer): had the events view drawn, it has by now.
    await page.evaluate(async () => { await (await fetch('/console/api/chart')).json(); await (await fetch('/console/api/events')).json(); });
    expect(await page.locator('#subscriptions').count()).toBe(1);
    expect(await page.locator('#events').count()).toBe(0);
  } finally {
    await page.unroute('**/console/api/chart');
  }
}, 60_000);

test('a poll sent before a filter change does not put the unfiltered rows back', async () => {
  await subscribe('race-a', '--prompt', 'a {n}');
  await subscribe('race-b', '--prompt', 'b {n}');
  const a = (await send('race-a', JSON.stringify({ n: 1 }))).json.event_id as string;
  const b = (await send('race-b', JSON.stringify({ n: 2 }))).json.event_id as string;
  await page.goto(`${serve.url}/console#/events`);
  await page.locator(`tr[data-event-id="${a}"]`).waitFor();
  await page.locator(`tr[data-event-id="${b}"]`).waitFor();

  // The store is slow to answer the next unfiltered poll; meanwhile the user picks race-a.
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let heldPoll = false;
  const pattern = (url: URL) => url.pathname === '/console/api/events' && !url.searchParams.has('subscription');
  await page.route(pattern, async (route) => {
    heldPoll = true;
    await held;
    await route.continue();
  });
  try {
    await eventually(() => heldPoll, 'an unfiltered poll in flight', 10_000);
    await page.selectOption('select[name="subscription"]', 'race-a');
    await eventually(async () => (await page.locator('#events tr[data-event-id]').count()) > 0
      && (await page.locator(`#events tr[data-event-id="${b}"]`).count()) === 0, 'the filtered list');
    const answered = page.waitForResponse((res) => pattern(new URL(res.url())));
    release();
    await answered;
    await page.evaluate(async () => { await (await fetch('/console/api/info')).json(); });
    const subscriptions = await page.locator('#events tr[data-event-id] td:nth-child(4)').allInnerTexts();
    expect(subscriptions.length).toBeGreaterThan(0);
    expect(new Set(subscriptions)).toEqual(new Set(['race-a']));
  } finally {
    release();
    await page.unroute(pattern);
  }
}, 60_000);

test('a payload with a 200,000-item array: drawn 500 at a time, the rest on request', async () => {
  await subscribe('wide', '--prompt', 'first {items.0}');
  const body = `{"items":[${Array.from({ length: 200_000 }, (_, i) => i % 10).join(',')}]}`;
  const accepted = await send('wide', body);
  expect(accepted.status).toBe(202);
  const eventId = accepted.json.event_id as string;
  await eventually(async () => (await cli('webhook', 'events', 'wide')).includes(`${eventId}\tcustom\tdelivered`), 'the wide event delivered');
  await openEvent(eventId);
  const items = page.locator('#payload details details').first();
  expect(await items.locator(':scope > .leaf').count()).toBe(500);
  const more = items.locator(':scope > button.tree-more');
  expect(await more.innerText()).toBe('show 500 more (199500 not shown)');
  await more.click();
  expect(await items.locator(':scope > .leaf').count()).toBe(1000);
  expect(await items.locator(':scope > .leaf').nth(999).innerText()).toBe('9');
  // Keyboard: the button takes focus and Enter draws the next ones.
  await more.focus();
  await page.keyboard.press('Enter');
  expect(await items.locator(':scope > .leaf').count()).toBe(1500);
}, 60_000);

test('when the first load of the events list fails (the store busy: 503), the page tries again by itself', async () => {
  await subscribe('retry', '--prompt', 'r {n}');
  const eventId = (await send('retry', JSON.stringify({ n: 1 }))).json.event_id as string;
  let refused = 0;
  await page.route('**/console/api/chart', async (route) => {
    if (refused === 0) {
      refused += 1;
      return route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ status: 'error', code: 'store_busy', message: 'The store is busy' }) });
    }
    return route.continue();
  });
  try {
    // A fresh load of the page (not a hash change): its first requests go to the busy store.
    await page.goto('about:blank');
    await page.goto(`${serve.url}/console#/events`);
    await page.locator('#notice').filter({ hasText: 'The store is busy' }).waitFor();
    await page.locator(`tr[data-event-id="${eventId}"]`).waitFor({ timeout: 15_000 });
    expect(await page.locator('#notice').innerText()).toBe('');
  } finally {
    await page.unroute('**/console/api/chart');
  }
}, 60_000);
