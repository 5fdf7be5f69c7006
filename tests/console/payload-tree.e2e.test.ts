/**
 * The event page's payload tree bounds what it draws when the page opens, whatever the
 * payload's shape (hunt 8 D3): 200,000 values as 400 arrays of 500 (0.4 MB, under the
 * default max_payload_size) drew every value at once, about 400,000 DOM nodes and seconds
 * of frozen session.page. In Debian's chromium through playwright-core.
 */
import { useConsoleBrowser } from './browser-session';

const session = useConsoleBrowser({ pollMs: 60_000 });

/** Opens the page of an event with this payload; the DOM nodes of its payload tree. */
async function open(payload: Record<string, unknown>): Promise<number> {
  const event = await session.fx.addEvent({ subscription: 'alerts', status: 'delivered' });
  await session.fx.events.putAll([{ ...event, message: { ...event.message, payload } }]);
  await session.page.goto(`${session.fx.url}/console#/event/${encodeURIComponent(event.event_id)}`);
  // A hash change does not reload the page: wait for this event's page, not the one before.
  await session.page.locator('#event-id').filter({ hasText: event.event_id }).waitFor({ timeout: 120_000 });
  return session.page.locator('#payload *').count();
}

test('200,000 values as 400 arrays of 500 draw a bounded number at open; a folded array draws when opened', async () => {
  const series = Object.fromEntries(Array.from({ length: 400 }, (_, s) => [`series_${s}`, Array.from({ length: 500 }, (_, i) => (s + i) % 10)]));
  expect(JSON.stringify(series).length).toBeLessThan(1024 * 1024);
  expect(await open(series)).toBeLessThan(20_000);
  const arrays = session.page.locator('#payload > details > details');
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
  expect(await session.page.locator('#payload > details > details > .leaf').count()).toBe(500);
  await open({ action: 'firing', alert: { labels: { severity: 'page' }, value: 3 } });
  expect(await session.page.locator('#payload > details > details').evaluate((d) => d.hasAttribute('open'))).toBe(true);
  expect(await session.page.locator('#payload > details > details > details').evaluate((d) => d.hasAttribute('open'))).toBe(false);
  expect(await session.page.locator('#payload').innerText()).toContain('"value": 3');
}, 120_000);
