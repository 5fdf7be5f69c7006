/**
 * Stored payload, reply, transcript, error and request-log text built to run script in the
 * console (tags with handlers, `javascript:` links, SVG, entities, closing tags of the page's
 * own script, `__proto__` keys) is shown as text in a real browser (Debian's chromium through
 * playwright-core): nothing runs, no element comes from the text, every link is http(s) or
 * the console's own, and the page keeps its frame and script guards.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startConsoleFixture, type ConsoleFixture } from './fixture';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HOSTILE = [
  '<img src=x onerror="window.__pwned=1">', '<script>window.__pwned=2</script>', '</script><script>window.__pwned=3</script>',
  '<svg onload="window.__pwned=4">', '<a href="javascript:window.__pwned=5">click</a>', '<iframe srcdoc="<script>parent.__pwned=6</script>">',
  '&lt;b&gt;entity&lt;/b&gt;', '{{constructor.constructor("window.__pwned=7")()}}', '${window.__pwned=8}',
].join(' ');

let fx: ConsoleFixture;
let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No browser at ${CHROMIUM}: install Debian's chromium or set CHROMIUM_PATH`);
  fx = await startConsoleFixture({ pollMs: 250 });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'] });
  page = await browser.newPage();
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await fx?.close();
});

test('hostile text in every stored field is shown as text, and runs nothing', async () => {
  const event = await fx.addEvent({
    subscription: 'pr-review', status: 'failed', prompt: `Review ${HOSTILE}`, reply: HOSTILE, warnings: [HOSTILE],
    error: { code: 'delivery_failed', message: `GitHub refused the delivery (422): ${HOSTILE}` },
    targets: { codehost_comment: { status: 'failed', detail: 'javascript:window.__pwned=9', at: new Date().toISOString() } },
    transcript_ref: JSON.stringify([{ role: 'assistant', tool_call: { name: 'get_file', input: { path: HOSTILE } } }, { role: 'tool', name: 'get_file', result: HOSTILE }]),
  });
  const payload = JSON.parse(`{"__proto__":{"polluted":"${'<img src=x onerror=window.__pwned=10>'}"},"constructor":{"prototype":{"x":1}},"pull_request":{"title":${JSON.stringify(HOSTILE)},"html_url":"javascript:window.__pwned=11"},${JSON.stringify(HOSTILE)}:"key"}`) as Record<string, unknown>;
  await fx.events.putAll([{ ...event, message: { ...event.message, payload } }]);

  await page.goto(`${fx.url}/console`);
  await page.locator(`tr[data-event-id="${event.event_id}"]`).waitFor();
  await page.goto(`${fx.url}/console#/event/${encodeURIComponent(event.event_id)}`);
  await page.locator('#event-id').waitFor();
  await page.locator('.transcript').waitFor();
  // Open every folded level of the payload tree.
  for (let i = 0; i < 5; i++) for (const summary of await page.locator('#payload details:not([open]) > summary').all()) await summary.click();

  const body = await page.locator('body').innerText();
  expect(body).toContain('<img src=x onerror="window.__pwned=1">');
  expect(body).toContain('</script><script>window.__pwned=3</script>');
  expect(await page.evaluate('window.__pwned')).toBeUndefined();
  expect(await page.evaluate('({}).polluted')).toBeUndefined();
  // No element made from the text: no img, iframe, svg other than the chart's, no script but the page's one.
  expect(await page.locator('img, iframe, object, embed').count()).toBe(0);
  expect(await page.locator('script').count()).toBe(1);
  expect(await page.locator('svg [onload]').count()).toBe(0);
  const hrefs = await page.locator('a[href]').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
  expect(hrefs.filter((h) => !/^(https?:\/\/|#)/.test(h))).toEqual([]);
  expect(problems).toEqual([]);
});

test('the page keeps its guards: CSP without inline script, no framing, no sniffing', async () => {
  const response = await page.goto(`${fx.url}/console`);
  const headers = response!.headers();
  expect(headers['content-security-policy']).toMatch(/script-src 'nonce-[^']+'/);
  expect(headers['content-security-policy']).not.toMatch(/unsafe-inline|unsafe-eval/);
  expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['x-content-type-options']).toBe('nosniff');
  // A state-changing call without the page's CSRF token is refused, also from the page's own origin.
  const status = await page.evaluate(async () => (await fetch('/console/api/subscriptions/alerts/pause', { method: 'POST', body: '{}' })).status);
  expect(status).toBe(403);
  expect((await fx.subscriptions.get('alerts'))!.state).toBe('active');
});
