/**
 * An event retried after a run that spent tokens keeps every run's transcript
 * (`Transcript.earlier`): the event page shows each run, oldest first, under its own
 * heading, as `webhook event` prints them. In Debian's chromium through playwright-core.
 */
import type { Transcript } from '../../functions/core/agent/run-record';
import { useConsoleBrowser } from './browser-session';

const session = useConsoleBrowser({ pollMs: 60_000 });

const run = (text: string, tool?: string): Transcript => ({
  v: 1, provider: 'openai', model: 'm', system_sha256: 'abc', user: 'Alert DiskRunningFull',
  steps: [{ step: 1, text, ...(tool ? { stop: 'tool_use' } : { stop: 'end' }), tool_calls: tool ? [{ name: tool, input: { q: 'db-1' }, ok: true, ms: 3, bytes: 9, result: 'found: 42' }] : [] }],
} as Transcript);

async function open(transcript: Transcript): Promise<void> {
  const event = await session.fx.addEvent({ subscription: 'alerts', status: 'delivered' });
  await session.fx.events.putAll([{ ...event, transcript_ref: JSON.stringify(transcript) }]);
  await session.page.goto(`${session.fx.url}/console#/event/${encodeURIComponent(event.event_id)}`);
  await session.page.locator('#event-id').filter({ hasText: event.event_id }).waitFor({ timeout: 60_000 });
}

test("a retried event shows every run's transcript, oldest first, each under its heading", async () => {
  await open({ ...run('Disk on db-1 is full.'), earlier: [run('Let me look that up.', 'lookup')] });
  expect(await session.page.locator('h4.run').allInnerTexts()).toEqual(['Run 1 of 2 (an earlier attempt)', 'Run 2 of 2']);
  const transcripts = session.page.locator('ol.transcript');
  expect(await transcripts.count()).toBe(2);
  expect(await transcripts.nth(0).innerText()).toContain('lookup');
  expect(await transcripts.nth(0).innerText()).toContain('Let me look that up.');
  expect(await transcripts.nth(1).innerText()).toContain('Disk on db-1 is full.');
}, 90_000);

test('a single run shows no run headings, as before', async () => {
  await open(run('All good.'));
  expect(await session.page.locator('h4.run').count()).toBe(0);
  expect(await session.page.locator('ol.transcript').innerText()).toContain('All good.');
}, 90_000);
