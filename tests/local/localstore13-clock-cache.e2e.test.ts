/**
 * (hunt 13, localstore) a CLI change applies to serve's next request without a restart, also
 * after serve's wall clock stepped back (NTP, a VM resumed, a Raspberry Pi corrected after boot).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { eventually, startServe, stopServe } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

test.each([0, -3600_000])('after a step of %d ms of the wall clock, `webhook pause` / `delete` apply to the next request', async (stepMs) => {
  const dir = tempConfigDir('agent: { provider: echo }\n', 'hookagent-h13-clock-');
  const sub = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'alerts', '--prompt', 'Alert {name}', '--deliver', 'log']);
  expect(sub.code).toBe(0);
  const secret = /whsec_\S+/.exec(sub.stdout)![0];
  const shift = join(dir, 'clock-shift');
  writeFileSync(shift, '0');
  const serve = await startServe(dir, { CLOCK_SHIFT_FILE: shift, NODE_OPTIONS: `--require ${join(__dirname, '..', 'local', 'clock-shift.cjs')}` });
  const post = async (name: string) => {
    const res = await fetch(`${serve.url}/webhooks/custom/alerts`, { method: 'POST', body: JSON.stringify({ name }), headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } });
    return { status: res.status, body: await res.text() };
  };
  try {
    expect((await post('before')).status).toBe(202);
    // The wall clock steps back one hour (serve's monotonic clock goes on).
    if (stepMs !== 0) writeFileSync(shift, String(stepMs));
    await eventually(() => { try { return stepMs === 0 || readFileSync(`${shift}.applied`, 'utf8') === String(stepMs); } catch { return false; } }, 'the step');
    expect((await runCli(['--config-dir', dir, 'webhook', 'pause', 'alerts'])).code).toBe(0);
    const paused = await post('while-paused');
    expect((await runCli(['--config-dir', dir, 'webhook', 'delete', 'alerts'])).code).toBe(0);
    const deleted = await post('after-delete');
    // A paused subscription's events are held, not queued; a deleted one's endpoint takes nothing.
    expect({ paused: /held/.test(paused.body), deleted: deleted.status }).toEqual({ paused: true, deleted: 404 });
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
}, 60_000);
