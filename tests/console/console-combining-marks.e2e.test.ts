/**
 * A pull request body of one letter and 65,535 combining marks (what GitHub lets anyone put
 * in a PR body: 65,536 characters) froze the event page for seconds (hunt 10 D1): Chromium
 * lays out one grapheme cluster in time that grows with the square of its length. The page
 * keeps the first few marks of a run and shows how many it left out, so it never draws a
 * cluster that long. Checked by what the page shows, in Debian's chromium.
 */
import { useConsoleBrowser } from './browser-session';

const session = useConsoleBrowser({ pollMs: 60_000 });

const MARKS = 65_535;
const KEPT = 8;

/** Text with each run of marks written as its length (a failure then prints a readable line, not 65k marks). */
const runs = (text: string): string => text.replace(/\p{M}+/gu, (run) => `{${[...run].length} marks}`);

/** Opens the event's page (payload, prompt and reply holding `text`) and returns what its parts show. */
async function shown(text: string): Promise<{ leaf: string; prompt: string; reply: string }> {
  const event = await session.fx.addEvent({ subscription: 'pr-review', status: 'delivered' });
  await session.fx.events.putAll([{
    ...event,
    prompt: `Review the pull request "Fix typo".\n\nDescription:\n${text}`,
    reply: `Quoted: ${text}`,
    message: { ...event.message, payload: { action: 'opened', number: 9, pull_request: { title: 'Fix typo', body: text, draft: false } } },
  }]);
  await session.page.goto(`${session.fx.url}/console#/event/${encodeURIComponent(event.event_id)}`);
  await session.page.locator('#event-id').filter({ hasText: event.event_id }).waitFor({ timeout: 600_000 });
  // The payload tree's first two levels are open: pull_request.body is a drawn leaf.
  const leaf = await session.page.locator('#payload .leaf').filter({ hasText: 'body' }).first().innerText();
  return { leaf, prompt: await session.page.locator('pre.prompt').innerText(), reply: await session.page.locator('pre.reply').innerText() };
}

test('a run of 65,535 combining marks is drawn as its first few and a count of the rest', async () => {
  const { leaf, prompt, reply } = await shown('a' + '\u0301'.repeat(MARKS));
  const drawn = `a{${KEPT} marks}<+${MARKS - KEPT} combining marks>`;
  expect(runs(leaf)).toBe(`"body": "${drawn}"`);
  expect(runs(prompt)).toBe(`Review the pull request "Fix typo".\n\nDescription:\n${drawn}`);
  expect(runs(reply)).toBe(`Quoted: ${drawn}`);
  // Nowhere on the page is a longer run of marks left.
  const body = await session.page.locator('body').innerText();
  const longest = Math.max(0, ...[...body.matchAll(/\p{M}+/gu)].map((m) => [...m[0]].length));
  expect(longest).toBe(KEPT);
}, 600_000);

test('text with a few marks per letter (Vietnamese, Devanagari, a short stack) is shown unchanged', async () => {
  const text = 'Vi\u1EC7t Nam, \u0939\u093F\u0928\u094D\u0926\u0940, e' + '\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308';
  const { leaf, prompt, reply } = await shown(text);
  expect(leaf).toContain(text);
  expect(prompt.endsWith(text)).toBe(true);
  expect(reply).toBe(`Quoted: ${text}`);
  expect(`${leaf}${prompt}${reply}`).not.toContain('combining marks>');
}, 120_000);

test('separate runs are capped each, and a run one mark over the kept few says so', async () => {
  const text = `x${'\u0301'.repeat(KEPT + 1)} y${'\u0300'.repeat(500)} z`;
  const { reply } = await shown(text);
  expect(runs(reply)).toBe(`Quoted: x{${KEPT} marks}<+1 combining mark> y{${KEPT} marks}<+${500 - KEPT} combining marks> z`);
}, 120_000);
