/**
 * Hunt 12 D4 (templates): `subscribe`/`update --prompt` refuse a placeholder path that can
 * never resolve, as the filter parser refuses it, naming the path to write. A subscription
 * stored with such a template (by an earlier version) still loads: list, show and test work,
 * and test names the path to write. Built CLI, local store.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../functions/core/ports';
import { openLocalRuntime } from '../../functions/local/compose';
import { buildCli, hkIn, tempConfigDir } from '../support/cli';

let dir: string;
beforeAll(async () => {
  buildCli();
  dir = tempConfigDir('', 'hookagent-tpl-paths-');
  mkdirSync(join(dir, 'data'), { recursive: true });
  // As an earlier version stored it: the template was taken then.
  const store = await openLocalRuntime(join(dir, 'data'), { role: 'cli', clock: systemClock });
  try {
    await store.subscriptions.create({
      name: 'legacy', events: ['alert.firing'], skills: [], deliver: ['log'], state: 'active', agent: 'none', prompt: 'Alert {alerts[0].labels.alertname}',
      secret: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', created_at: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z',
    });
  } finally {
    await store.close();
  }
}, 90_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hk = (...args: string[]) => hkIn(dir, ...args);

test.each([
  ['{alerts[0].labels.alertname}', 'write {alerts.0.labels.alertname}'],
  ['{$.alerts.0.labels.instance}', "paths are written without '$': write {alerts.0.labels.instance}"],
])('subscribe --prompt "Alert %s" is refused, naming the path to write', async (placeholder, told) => {
  const result = await hk('webhook', 'subscribe', 'alerts', '--events', 'alert.firing', '--agent', 'none', '--prompt', `Alert ${placeholder}`);
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
  expect(result.stderr).toContain(`Invalid prompt template: '${placeholder}' at position 7 never resolves; `);
  expect(result.stderr).toContain(told);
  expect((await hk('webhook', 'show', 'alerts')).code).toBe(1);
});

test('update --prompt is refused the same way and changes nothing', async () => {
  expect((await hk('webhook', 'subscribe', 'fine', '--events', 'alert.firing', '--agent', 'none', '--prompt', 'Alert {alerts.0.labels.alertname}')).code).toBe(0);
  const result = await hk('webhook', 'update', 'fine', '--prompt', 'Alert {alerts[0].labels.alertname}');
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('write {alerts.0.labels.alertname}');
  expect(JSON.parse((await hk('webhook', 'show', 'fine', '--json')).stdout)).toMatchObject({ prompt: 'Alert {alerts.0.labels.alertname}' });
});

test('a subscription stored with such a template still loads; test names the path to write', async () => {
  expect((await hk('webhook', 'list')).stdout).toContain('legacy');
  expect(JSON.parse((await hk('webhook', 'show', 'legacy', '--json')).stdout)).toMatchObject({ prompt: 'Alert {alerts[0].labels.alertname}' });
  const tested = await hk('webhook', 'test', 'legacy', '--payload', JSON.stringify({ alerts: [{ labels: { alertname: 'DiskFull' } }] }));
  expect(tested.code).toBe(0);
  expect(tested.stdout).toContain('Alert {alerts[0].labels.alertname}');
  expect(tested.stdout).toContain('Unresolved placeholders (left as written): {alerts[0].labels.alertname} (index arrays with a dot: write {alerts.0.labels.alertname})');
});

test('a subscription stored with such a template can still be updated in its other settings', async () => {
  const result = await hk('webhook', 'update', 'legacy', '--description', 'disk alerts');
  expect(result.code).toBe(0);
  expect(JSON.parse((await hk('webhook', 'show', 'legacy', '--json')).stdout)).toMatchObject({ prompt: 'Alert {alerts[0].labels.alertname}', description: 'disk alerts' });
});
