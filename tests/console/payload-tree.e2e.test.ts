/**
 * The event page's payload tree bounds what it draws when the page opens, whatever the
 * payload's shape (hunt 8 D3): 200,000 values as 400 arrays of 500 (0.4 MB, under the
 * default max_payload_size) drew every value at once, about 400,000 DOM nodes and seconds
 * of frozen page. In Debian's chromium through playwright-core.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startConsoleFixture, type ConsoleFixture } from './fixture';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let fx: ConsoleFixture;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No browser at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium), or set CHROMIUM_PATH`);
  fx = await startConsoleFixture({ pollMs: 60_000 });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'] });
  page = await browser.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
}, 60_000);
afterEach(() => expect(pageErrors).toEqual([]));
afterAll(async () => {
  await browser?.close();
  await fx?.close();
});

/** Opens the page of an event with this payload; the DOM nodes of its payload tree. */
async function open(payload: Record<string, unknown>): Promise<number> {
  const event = await fx.addEvent({ subscription: 'alerts', status: 'delivered' });
  await fx.events.putAll([{ ...event, message: { ...event.message, payload } }]);
  await page.goto(`${fx.url}/console#/event/${encodeURIComponent(event.event_id)}`);
  // A hash change does not reload the page: wait for this event's page, not the one before.
  await page.locator('#event-id').filter({ hasText: event.event_id }).waitFor({ timeout: 120_000 });
  return page.locator('#payload *').count();
}

test('200,000 values as 400 arrays of 500 draw a bounded number at open; a folded array draws when opened', async () => {
  const series = Object.fromEntries(Array.from({ length: 400 }, (_, s) => [`series_${s}`, Array.from({ length: 500 }, (_, i) => (s + i) % 10)]));
  expect(JSON.stringify(series).length).toBeLessThan(1024 * 1024);
  expect(await open(series)).toBeLessThan(20_000);
  const arrays = page.locator('#payload > details > details');
  expect(await arrays.count()).toBe(400);
  // The first ones open with their values, the rest folded with nothing drawn inside.
  expect(await arrays.first().evaluate((d) => d.hasAttribute('open'))).toBe(true);
  expect(await arrays.first().locator(':scope > .leaf').count()).toBe(500);
  const last = arrays.nth(399);
  expect(await last.evaluate((d) => d.hasAttribute('open'))).toBe(false);
  expect(await last.locator(':scope > .leaf').count()).toBe(0);
  await last.locator(':scope > summary').click();
  expect(await last.locator(':scope > .leaf').count()).toBe(500);
  expect(await last.locator(':scope > .leaf').nth(499).innerText()).toBe(String((399 + 499) % 10));
}, 120_000);

test('the same values as one flat array: 500 drawn, and a small payload keeps its first two levels open', async () => {
  expect(await open({ values: Array.from({ length: 200_000 }, (_, i) => i % 10) })).toBeLessThan(5_000);
  expect(await page.locator('#payload > details > details > .leaf').count()).toBe(500);
  await open({ action: 'firing', alert: { labels: { severity: 'page' }, value: 3 } });
  expect(await page.locator('#payload > details > details').evaluate((d) => d.hasAttribute('open'))).toBe(true);
  expect(await page.locator('#payload > details > details > details').evaluate((d) => d.hasAttribute('open'))).toBe(false);
  expect(await page.locator('#payload').innerText()).toContain('"value": 3');
}, 120_000);
