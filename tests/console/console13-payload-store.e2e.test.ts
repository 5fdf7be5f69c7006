/**
 * The standalone `hookagent console` over the local store reads payloads kept apart (over
 * 200 KB, or deeper than 128 levels) through the store's own payload store (hunt 13, console
 * D1: it read them as files while the local store keeps them in SQLite, `sqlite:<key>`; the
 * event page had no payload, and a resume from the console could not check a held event
 * against the payload filters as they are now, so it released one the subscription no
 * longer takes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { BIN, buildCli, runCli } from '../support/cli';
import { eventually, startServe, stopServe } from '../support/serve';

const env = { GH_SECRET: 'console-payload-store', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
let dir: string;

beforeAll(() => buildCli(), 60_000);
afterAll(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

async function startConsole(): Promise<{ child: ChildProcess; base: string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, '--config-dir', dir, 'console', '--port', '0'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await eventually(() => /console on http:\/\/127\.0\.0\.1:\d+/.test(out), 'the console to listen');
  return { child, base: /(http:\/\/127\.0\.0\.1:\d+)\/console/.exec(out)![1]!, exited };
}

/**
 * A config dir whose subscription 'big' holds a real signed 250 KB GitHub delivery (kept
 * apart in the payload store), received while paused, whose filters then changed so that
 * they no longer take it. Returns the dir and a CLI bound to it.
 */
async function heldBigEvent(prefix: string): Promise<{ dir: string; cli: (...args: string[]) => ReturnType<typeof runCli> }> {
  const d = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(d, 'config.yaml'), 'webhooks: { github: { secret: ${GH_SECRET} } }\n');
  const cli = (...args: string[]) => runCli(['--config-dir', d, ...args], env);
  expect((await cli('webhook', 'subscribe', 'big', '--events', 'issues.opened', '--agent', 'none', '--prompt', 'Issue {{issue.number}}')).code).toBe(0);
  expect((await cli('webhook', 'pause', 'big')).code).toBe(0);
  const body = JSON.stringify({ action: 'opened', issue: { number: 1, title: 'big one', body: 'x'.repeat(250_000) }, repository: { full_name: 'o/r' } });
  const serve = await startServe(d, env);
  try {
    const res = await fetch(`${serve.url}/webhooks/github`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': 'big-1', 'x-hub-signature-256': signHub(body, env.GH_SECRET) } });
    expect(res.status).toBe(202);
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
  // The subscription's filters change while the event is held: it no longer takes issue 1.
  expect((await cli('webhook', 'update', 'big', '--filter', 'issue.number == 2')).code).toBe(0);
  return { dir: d, cli };
}

test('hookagent console shows a held payload over 200 KB (kept apart in SQLite)', async () => {
  ({ dir } = await heldBigEvent('hookagent-h13-console-'));

  const consoleProc = await startConsole();
  try {
    const list = (await (await fetch(`${consoleProc.base}/console/api/events?subscription=big`)).json()) as { events: Array<{ event_id: string; status: string }> };
    expect(list.events.map((e) => e.status)).toEqual(['held']);
    const id = list.events[0]!.event_id;
    const event = (await (await fetch(`${consoleProc.base}/console/api/events/${id}`)).json()) as { payload: { issue?: { title: string } } | null; payload_error: string | null };
    // README: "Then the payload as a collapsible JSON tree".
    expect({ payload_error: event.payload_error, title: event.payload?.issue?.title }).toEqual({ payload_error: null, title: 'big one' });
  } finally {
    consoleProc.child.kill('SIGINT');
    await consoleProc.exited;
  }
}, 120_000);

test('resume from hookagent console checks a held 250 KB event against the filters as they are now', async () => {
  ({ dir } = await heldBigEvent('hookagent-h13-console-resume-'));
  const consoleProc = await startConsole();
  try {
    const page = await fetch(`${consoleProc.base}/console`);
    const html = await page.text();
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(html)![1]!;
    const session = /hookagent_console_session=([^;]+)/.exec(page.headers.get('set-cookie') ?? '')![1]!;
    const resumed = await fetch(`${consoleProc.base}/console/api/subscriptions/big/resume`, { method: 'POST', headers: { 'x-csrf-token': csrf, cookie: `hookagent_console_session=${session}`, 'content-type': 'application/json' }, body: '{}' });
    const answer = (await resumed.json()) as { messages: string[] };
    expect(resumed.status).toBe(200);
    const list = (await (await fetch(`${consoleProc.base}/console/api/events?subscription=big`)).json()) as { events: Array<{ status: string }> };
    // README: "a resume reads a held event's payload kept apart in the payload store to check
    // it against the payload filters as they are now" — issue 1 is no longer taken.
    expect({ statuses: list.events.map((e) => e.status), messages: answer.messages }).toEqual({ statuses: ['suppressed'], messages: expect.anything() });
  } finally {
    consoleProc.child.kill('SIGINT');
    await consoleProc.exited;
  }
}, 120_000);

test('the same resume through `hookagent webhook resume` suppresses the event too', async () => {
  const { dir: d, cli } = await heldBigEvent('hookagent-h13-console-ctl-');
  try {
    expect((await cli('webhook', 'resume', 'big')).code).toBe(0);
    const events = await cli('webhook', 'events', 'big', '--json');
    expect(events.stdout).toContain('suppressed');
    expect(events.stdout).not.toContain('"queued"');
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}, 120_000);
