/**
 * Events held by a paused subscription do not expire (DESIGN §3: "A 2xx means the event is
 * durably queued or held"; §2.4: `resume` releases them), however long the pause, while
 * finished events still go after 14 days. The first serve runs with a preload that puts its
 * clock 15 days in the past (clock-shift.cjs); serve then starts again today
 * (a reboot, an upgrade), which drops what has expired.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, runCli } from '../support/cli';
import { eventually, startServe, stopServe } from '../support/serve';

const env = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
const DAY = 24 * 3600 * 1000;

beforeAll(() => buildCli(), 60_000);

test('events held 15 days are released by resume after a serve restart and kept once delivered; a delivered event of that day expires', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-held-'));
  const shift = join(dir, 'clock-shift');
  writeFileSync(shift, String(-15 * DAY));
  writeFileSync(join(dir, 'config.yaml'), '');
  const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args], env);
  const secrets: Record<string, string> = {};
  for (const name of ['holiday', 'alerts']) {
    const sub = await hk('webhook', 'subscribe', name, '--agent', 'none', '--prompt', 'Alert {name}');
    expect(sub.code).toBe(0);
    secrets[name] = /whsec_\S+/.exec(sub.stdout)![0];
  }
  expect((await hk('webhook', 'pause', 'holiday')).code).toBe(0);
  const post = (url: string, name: string, body: string) => fetch(`${url}/webhooks/custom/${name}`, {
    method: 'POST', body: JSON.stringify({ name: body }), headers: { authorization: `Bearer ${secrets[name]}`, 'content-type': 'application/json' },
  });
  const events = async (name: string) => JSON.parse((await hk('webhook', 'events', name, '--json')).stdout) as Array<{ event_id: string; status: string }>;
  try {
    // 15 days ago: three events held by the paused subscription, one delivered by the other.
    const first = await startServe(dir, { ...env, CLOCK_SHIFT_FILE: shift, NODE_OPTIONS: `--require ${join(__dirname, 'clock-shift.cjs')}` });
    try {
      for (let i = 0; i < 3; i++) expect(await (await post(first.url, 'holiday', `a${i}`)).json()).toMatchObject({ status: 'held' });
      expect((await post(first.url, 'alerts', 'old')).status).toBe(202);
      await eventually(async () => (await events('alerts')).some((e) => e.status === 'delivered'), 'the old alert delivered');
    } finally {
      expect(await stopServe(first)).toBe(0);
    }

    // Today: serve starts again (its start drops what has expired), then the team resumes.
    const second = await startServe(dir, env);
    try {
      const status = await hk('status');
      const resume = await hk('webhook', 'resume', 'holiday');
      expect({ status: /held\s+\d+/.exec(status.stdout)?.[0], resume: resume.stdout.trim(), alerts: (await events('alerts')).length })
        .toEqual({ status: expect.stringMatching(/held\s+3/), resume: expect.stringContaining('released 3 held event(s)'), alerts: 0 });
      await eventually(async () => (await events('holiday')).filter((e) => e.status === 'delivered').length === 3, 'the released events delivered');
    } finally {
      expect(await stopServe(second)).toBe(0);
    }

    // Delivered today, they are kept 14 days from now: the next start keeps them.
    const third = await startServe(dir, env);
    try {
      expect((await events('holiday')).map((e) => e.status)).toEqual(['delivered', 'delivered', 'delivered']);
    } finally {
      expect(await stopServe(third)).toBe(0);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
