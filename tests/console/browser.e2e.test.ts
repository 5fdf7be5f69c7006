/**
 * The console in a real browser: Debian's chromium driven by playwright-core, headless.
 * Clicks through the list (which updates live) → one event → Replay, pauses and resumes
 * a subscription, reads the request log, and saves screenshots under tests/console/artifacts.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { MASK } from '../../cli/console/redact';
import { eventually } from '../support/serve';
import { SUB_SECRET, startConsoleFixture, type ConsoleFixture } from './fixture';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(__dirname, 'artifacts');

let fx: ConsoleFixture;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No browser at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium), as .ci/run does, or set CHROMIUM_PATH`);
  mkdirSync(ARTIFACTS, { recursive: true });
  fx = await startConsoleFixture({ pollMs: 250 });
  browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
}, 60_000);
afterEach(() => expect(pageErrors).toEqual([]));
afterAll(async () => {
  await browser?.close();
  await fx?.close();
});

test('events list: rows with status, model and tokens, the chart, and new events without a reload', async () => {
  await page.goto(`${fx.url}/console`);
  const row = page.locator(`tr[data-event-id="${fx.rich.event_id}"]`);
  await row.waitFor();
  await expect(row.innerText()).resolves.toMatch(/github\s+pull_request\.opened\s+pr-review\s+delivered\s+5\.1 s\s+claude-sonnet-4-5\s+8822/);
  expect(await page.locator('#chart rect').count()).toBeGreaterThan(5);
  expect(await page.locator('#chart rect[data-outcome="failed"]').count()).toBeGreaterThan(0);
  await page.screenshot({ path: join(ARTIFACTS, 'events.png'), fullPage: true });

  const fresh = await fx.addEvent({ subscription: 'alerts', status: 'queued' });
  await page.locator(`tr[data-event-id="${fresh.event_id}"]`).waitFor({ timeout: 10_000 });
  expect(await page.locator('#events tr').first().getAttribute('data-event-id')).toBe(fresh.event_id);

  await page.selectOption('select[name="status"]', 'failed');
  await eventually(async () => (await page.locator('#events tr').count()) > 0
    && (await page.locator('#events tr .status').allInnerTexts()).every((s) => s === 'failed'), 'the status filter');
  await page.selectOption('select[name="status"]', '');
  await page.fill('input[name="q"]', '72d3162e');
  await eventually(async () => (await page.locator('#events tr').count()) === 1, 'the search');
  await page.fill('input[name="q"]', '');
});

test('one event → Replay: the page shows the new attempt, and the event log has it', async () => {
  await page.locator(`tr[data-event-id="${fx.rich.event_id}"]`).click();
  await page.locator('#event-id').waitFor();
  expect(await page.locator('#event-id').innerText()).toBe(fx.rich.event_id);
  const payload = page.locator('#payload');
  expect(await payload.innerText()).toContain('"Add retry to uploads"');
  expect(await payload.innerText()).toContain(MASK);
  expect(await page.content()).not.toContain(SUB_SECRET);
  expect(await page.locator('#headers').innerText()).toContain('x-hub-signature-256');
  expect(await page.locator('#candidates').innerText()).toMatch(/alerts\s+unmatched\s+no event filter/);
  expect(await page.locator('.record').innerText()).toMatch(/event filter\s+pull_request\.opened/);
  expect(await page.locator('.record .filters').innerText()).toBe('pull_request.draft == false');
  expect(await page.locator('.prompt').innerText()).toContain('Review the pull request');
  const steps = page.locator('.transcript li.step');
  expect(await steps.count()).toBe(2);
  expect(await steps.nth(0).innerText()).toMatch(/assistant · http_get[\s\S]*pull\/7\.diff/);
  expect(await steps.nth(1).innerText()).toMatch(/tool · http_get[\s\S]*result\s*\+ retry\(\)/);
  expect(await page.locator('.reply').innerText()).toContain('never backs off');
  // Every token the run was charged for, as `webhook event` and `webhook usage` count them.
  expect(await page.locator('.record').innerText()).toMatch(/tokens\s+2310 in, 512 out, 4800 cache read, 1200 cache write, 3 step\(s\)/);
  expect(await page.locator('.targets a').getAttribute('href')).toBe('https://github.test/octo/app/pull/7#issuecomment-101');
  // The JSON tree: two levels open, deeper ones folded until clicked.
  expect(await payload.innerText()).not.toContain('payload-hook');
  const node = page.locator('#payload details details details').first();
  expect(await node.getAttribute('open')).toBeNull();
  await node.locator('summary').first().click();
  expect(await node.getAttribute('open')).not.toBeNull();
  await page.screenshot({ path: join(ARTIFACTS, 'event.png'), fullPage: true });

  await page.click('#replay');
  const notice = page.locator('#replayed');
  await notice.waitFor();
  const text = await notice.innerText();
  expect(text).toContain(`a replay of ${fx.rich.event_id}`);
  const newId = /Queued (\S+)/.exec(text)?.[1];
  expect(newId).toMatch(/^evt_/);
  const copy = await fx.events.get(newId!, 'pr-review');
  expect(copy?.message.replay_of).toBe(fx.rich.event_id);

  await notice.locator('a').click();
  await eventually(async () => (await page.locator('#event-id').innerText().catch(() => '')) === newId, 'the replay page');
  expect(await page.locator('.record .status').first().innerText()).toBe('queued');
});

test('subscriptions: endpoint URLs to paste, Pause and Resume', async () => {
  await page.click('a[data-nav="subscriptions"]');
  const row = page.locator('tr[data-subscription="alerts"]');
  await row.waitFor();
  expect(await row.locator('input.url').last().inputValue()).toBe('https://hooks.example.com/webhooks/custom/alerts');
  await row.locator('button[data-action="pause"]').click();
  await page.locator('tr[data-subscription="alerts"] button[data-action="resume"]').waitFor();
  expect((await fx.subscriptions.get('alerts'))!.state).toBe('paused');
  expect(await page.locator('#notice').innerText()).toContain("Paused 'alerts'");
  await page.screenshot({ path: join(ARTIFACTS, 'subscriptions.png'), fullPage: true });
  await page.locator('tr[data-subscription="alerts"] button[data-action="resume"]').click();
  await page.locator('tr[data-subscription="alerts"] button[data-action="pause"]').waitFor();
  expect((await fx.subscriptions.get('alerts'))!.state).toBe('active');
});

test('requests: the log with the reason for each', async () => {
  await page.click('a[data-nav="requests"]');
  const table = page.locator('#requests');
  await table.waitFor();
  const text = await table.innerText();
  expect(text).toMatch(/rejected_signature\s+Signature does not match \(×3\)/);
  // Each candidate's verdict, worded as `webhook requests` words it.
  expect(text).toContain('pr-review: yes (event pull_request.opened matches)');
  await page.selectOption('select[name="outcome"]', 'rejected_signature');
  await eventually(async () => (await page.locator('#requests tbody tr').count()) === 1, 'the outcome filter');
  expect(await page.locator('#requests tbody').innerText()).toContain('Signature does not match');
});

test('payload text cannot disguise itself: bidi overrides and control characters are shown, long strings wrap', async () => {
  const at = Date.now();
  const disguised = await fx.addEvent({ subscription: 'alerts', status: 'delivered', reply: 'see invoice_\u202Egpj.exe \u001b[31mred' }, at);
  const message = { ...disguised.message, payload: { file: 'invoice_\u202Egpj.exe', long: 'x'.repeat(20_000) } };
  await fx.events.putAll([{ ...disguised, message }]);
  await page.setViewportSize({ width: 375, height: 800 });
  await page.goto(`${fx.url}/console#/event/${encodeURIComponent(disguised.event_id)}`);
  // The event's own view, not the list still shown while it loads (its reply previews say invoice_ too): the payload's long string is only there.
  await page.locator(`text=${'x'.repeat(1000)}`).first().waitFor();
  const body = await page.locator('body').innerText();
  expect(body).toContain('invoice_<U+202E>gpj.exe');
  expect(body).toContain('<U+001B>[31mred');
  expect(body).not.toContain('\u202E');
  // The 20,000-character string wraps: the page is not wider than the screen.
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(400);
  await page.setViewportSize({ width: 1280, height: 800 });
});

test('when the list is full (200 newest), the page says so, and Older continues the list where it ended', async () => {
  const start = Date.now() - 3_600_000;
  await Promise.all(Array.from({ length: 205 }, (_, i) => fx.addEvent({ subscription: 'pr-review', status: 'delivered' }, start + i)));
  await page.goto(`${fx.url}/console#/events`);
  await page.locator('#events-more').filter({ hasText: 'Showing the newest 200' }).waitFor();
  expect(await page.locator('#events tr').count()).toBe(200);
  const firstPage = await page.locator('#events tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-event-id')));
  await page.click('#events-older');
  await page.locator('#events-newest').waitFor();
  const secondPage = await page.locator('#events tr[data-event-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-event-id')));
  const answer = (await (await fetch(`${fx.url}/console/api/events?limit=1000`)).json()) as { events: Array<{ event_id: string }> };
  // The second page is exactly what follows the first: nothing repeated, nothing skipped.
  expect([...firstPage, ...secondPage]).toEqual(answer.events.map((e) => e.event_id).slice(0, firstPage.length + secondPage.length));
  expect(secondPage.length).toBe(answer.events.length - 200);
  await page.screenshot({ path: join(ARTIFACTS, 'events-older.png'), fullPage: true });
  await page.click('#events-newest');
  await page.locator('#events-more').filter({ hasText: 'Showing the newest 200' }).waitFor();
});

test("a deleted subscription's events stay listed, marked deleted, and it can be picked in the filter", async () => {
  await fx.subscriptions.create({ name: 'retired', events: [], skills: [], deliver: ['log'], state: 'active', secret: 'whsec_cmV0aXJlZHJldGlyZWRyZXRpcmVkcmV0aXJlZDEy', created_at: '2026-11-01T10:00:00.000Z', updated_at: '2026-11-01T10:00:00.000Z' });
  const gone = await fx.addEvent({ subscription: 'retired', status: 'delivered' });
  await fx.subscriptions.delete('retired');
  await page.goto(`${fx.url}/console#/events`);
  // A reload: the page's poll may have drawn the row while 'retired' still existed, and drawn rows are not redrawn.
  await page.reload();
  const row = page.locator(`tr[data-event-id="${gone.event_id}"]`);
  await row.waitFor();
  expect(await row.locator('td:nth-child(4)').innerText()).toMatch(/retired\s*deleted/);
  await page.selectOption('select[name="subscription"]', 'retired');
  await eventually(async () => (await page.locator('#events tr[data-event-id]').allInnerTexts()).length === 1, 'the deleted subscription picked');
  expect(await page.locator('select[name="subscription"] option[value="retired"]').innerText()).toBe('retired (deleted)');
  await page.selectOption('select[name="subscription"]', '');
});

test('a search stopped at its read bound says how far it searched, and Search older goes on until it finds', async () => {
  const bounded = await startConsoleFixture({ pollMs: 250, searchBudget: 4 });
  try {
    // The oldest seeded event: every other record is read before it.
    const all = [...await bounded.events.listBySubscription('pr-review', 1000), ...await bounded.events.listBySubscription('alerts', 1000)];
    const oldest = all.reduce((a, b) => (a.received_at < b.received_at ? a : b));
    await page.goto(`${bounded.url}/console#/events`);
    await page.locator('#events tr[data-event-id]').first().waitFor();
    await page.fill('input[name="q"]', oldest.event_id);
    await page.locator('#events-more').filter({ hasText: /Searched \d+ records, back to/ }).waitFor();
    expect(await page.locator('#events-older').innerText()).toBe('Search older');
    await page.screenshot({ path: join(ARTIFACTS, 'events-searched.png'), fullPage: true });
    expect(await page.locator(`tr[data-event-id="${oldest.event_id}"]`).count()).toBe(0);
    let clicks = 0;
    for (; clicks < 30 && (await page.locator(`tr[data-event-id="${oldest.event_id}"]`).count()) === 0; clicks += 1) {
      await page.click('#events-older');
      await page.waitForTimeout(50);
    }
    expect(clicks).toBeGreaterThan(1);
    await page.locator(`tr[data-event-id="${oldest.event_id}"]`).waitFor();
    await page.fill('input[name="q"]', '');
  } finally {
    // Off the page first: its 250 ms poll would otherwise meet the closed server and log an error.
    await page.goto('about:blank');
    await bounded.close();
  }
});
