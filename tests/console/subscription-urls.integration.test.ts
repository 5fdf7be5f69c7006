/**
 * The console's Subscriptions page gives, for each subscription, only the endpoint URLs
 * it really receives, as `webhook subscribe`/`show` print them (hunt 5 D8).
 */
import { startConsoleFixture, type ConsoleFixture } from './fixture';

let fx: ConsoleFixture;
beforeAll(async () => {
  fx = await startConsoleFixture();
  const base = { skills: [], deliver: ['log' as const], state: 'active' as const, secret: 'whsec_x', created_at: '2026-11-01T10:00:00.000Z', updated_at: '2026-11-01T10:00:00.000Z' };
  await fx.subscriptions.create({ ...base, name: 'firing', events: ['alert.firing'] });
  await fx.subscriptions.create({ ...base, name: 'mr', events: ['merge_request'] });
  await fx.subscriptions.create({ ...base, name: 'gh-only', events: ['github:push'] });
  await fx.subscriptions.create({ ...base, name: 'everything', events: ['*'] });
}, 30_000);
afterAll(async () => fx.close());

test('each subscription lists the endpoints it receives, as the CLI prints them', async () => {
  const subs = (await (await fetch(`${fx.url}/console/api/subscriptions`)).json()) as Array<{ name: string; urls: Record<string, string> }>;
  const endpoints = Object.fromEntries(subs.map((s) => [s.name, Object.keys(s.urls).sort()]));
  expect(endpoints).toEqual({
    alerts: ['custom'],
    firing: ['custom'],
    mr: ['custom', 'gitlab'],
    'gh-only': ['github'],
    everything: ['custom', 'github', 'gitlab'],
    'pr-review': ['custom', 'github'],
  });
  const mr = subs.find((s) => s.name === 'mr')!;
  expect(mr.urls).toEqual({ gitlab: 'https://hooks.example.com/webhooks/gitlab', custom: 'https://hooks.example.com/webhooks/custom/mr' });
});

test('the page shows the URLs the API gives, not GitHub and GitLab for every subscription with events', async () => {
  const html = await (await fetch(`${fx.url}/console`)).text();
  expect(html.includes("s.events.length ? [h('div', {}, 'GitHub '")).toBe(false);
  expect(html.includes("['GitHub ', s.urls.github]")).toBe(true);
});
