/**
 * An event the worker ended `rate_limited` or `over_budget` (acknowledged, nothing runs until
 * someone replays it: worker/process.ts FINISHED) is not shown as still pending (hunt 13,
 * console D2: it read "Not rendered yet.", "No reply yet.", "Nothing delivered yet.").
 */
import { useConsoleBrowser } from './browser-session';

const session = useConsoleBrowser();

test.each([
  ['rate_limited', { code: 'rate_limited', message: "max_runs_per_hour 1 reached (1 run this hour); replay it with 'hookagent webhook replay <id>'" }, undefined],
  ['over_budget', { code: 'over_budget', message: 'The daily token budget of pr-review (1000) is spent: 1200 tokens used on 2026-11-25 (UTC); the model was not called' }, 'Review the pull request'],
] as const)('a %s event does not read as still to run', async (status, error, prompt) => {
  const { fx, page } = session;
  const event = await fx.addEvent({ subscription: 'pr-review', status, error, ...(prompt ? { prompt } : {}) });
  await page.goto(`${fx.url}/console#/event/${encodeURIComponent(event.event_id)}`);
  const card = page.locator('.card.record[data-subscription="pr-review"]');
  await card.waitFor();
  const text = await card.innerText();
  expect(text).toContain(status);
  // It ended: the worker acknowledged it and will not run it again by itself.
  expect(text.match(/[^\n]*\byet\b[^\n]*/g) ?? []).toEqual([]);
});
