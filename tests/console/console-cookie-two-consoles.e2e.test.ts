/**
 * Hunt 11 D3: browsers keep cookies by host and path, not by port. Every console set one
 * auth cookie name on 127.0.0.1, so opening a second serve's banner link (or a `hookagent
 * console --auth-token`) logged the first console out. Each token now has its own cookie
 * name, derived from its key; a console reads only its own. Also: `/console/?token=` (a
 * trailing slash) opens the console as `/console?token=` does. Chromium via playwright-core.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { BIN, buildCli } from '../support/cli';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';
import { serveConsole } from './serve-console-link';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ENV = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
const STANDALONE_TOKEN = 'c0ffee'.repeat(6);

let browser: Browser | undefined;
const serves: Serve[] = [];
let standalone: { child: ChildProcess; exited: Promise<number | null> } | undefined;

beforeAll(() => buildCli(), 60_000);
afterAll(async () => {
  await browser?.close();
  for (const s of serves) await stopServe(s);
  if (standalone) {
    standalone.child.kill('SIGINT');
    await standalone.exited;
  }
});

async function serveOn(dir: string): Promise<Serve> {
  const s = await startServe(dir, ENV);
  serves.push(s);
  return s;
}

/** `hookagent console --auth-token …` on its own port; resolves with its base URL. */
async function startStandalone(dir: string): Promise<string> {
  const child = spawn(process.execPath, [BIN, '--config-dir', dir, 'console', '--port', '0', '--auth-token', STANDALONE_TOKEN], { env: { ...process.env, ...ENV }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  standalone = { child, exited: new Promise((resolve) => child.on('exit', resolve)) };
  await eventually(() => /console on http:\/\/127\.0\.0\.1:\d+/.test(out), 'the console to listen');
  return /(http:\/\/127\.0\.0\.1:\d+)\/console/.exec(out)![1]!;
}

/** What the page's own polling gets from its console's API. */
const infoStatus = (page: Page) => page.evaluate(async () => (await fetch('/console/api/info', { credentials: 'same-origin' })).status);

/** The auth cookie a banner link sets: its name and the whole `name=value`. */
async function authCookie(link: string): Promise<{ name: string; pair: string }> {
  const entry = await fetch(link, { redirect: 'manual' });
  expect(entry.status).toBe(303);
  const pair = (entry.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { name: pair.slice(0, pair.indexOf('=')), pair };
}

test('two serves and a standalone console in one browser stay logged in side by side, and after a restart on another port', async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No browser at ${CHROMIUM}`);
  const dirA = mkdtempSync(join(tmpdir(), 'hookagent-cookie-a-'));
  const a = await serveOn(dirA);
  const b = await serveOn(mkdtempSync(join(tmpdir(), 'hookagent-cookie-b-')));
  const c = await startStandalone(mkdtempSync(join(tmpdir(), 'hookagent-cookie-c-')));

  // Each token has its own cookie name.
  const names = [(await authCookie(serveConsole(a).link)).name, (await authCookie(serveConsole(b).link)).name, (await authCookie(`${c}/console?token=${STANDALONE_TOKEN}`)).name];
  for (const name of names) expect(name).toMatch(/^hookagent_console_auth_[0-9a-f]{8}$/);
  expect(new Set(names).size).toBe(3);

  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'] });
  const context = await browser.newContext();
  const pageA = await context.newPage();
  await pageA.goto(serveConsole(a).link);
  expect(await infoStatus(pageA)).toBe(200);
  const pageB = await context.newPage();
  await pageB.goto(serveConsole(b).link);
  const pageC = await context.newPage();
  await pageC.goto(`${c}/console?token=${STANDALONE_TOKEN}`);
  // Each console, still open in its tab, keeps polling with its own cookie.
  expect([await infoStatus(pageA), await infoStatus(pageB), await infoStatus(pageC)]).toEqual([200, 200, 200]);

  // serve's token (and so its cookie's name) outlives a restart, on whatever port it gets.
  await stopServe(a);
  const again = await serveOn(dirA);
  expect(serveConsole(again).token).toBe(serveConsole(a).token);
  const reopened = await context.newPage();
  const response = await reopened.goto(`${again.url}/console`);
  expect(response?.status()).toBe(200);
  expect(await infoStatus(reopened)).toBe(200);
  expect(await infoStatus(pageB)).toBe(200);
}, 120_000);

test('/console/?token= (a trailing slash) opens the console as /console?token= does', async () => {
  const s = await serveOn(mkdtempSync(join(tmpdir(), 'hookagent-cookie-slash-')));
  const { token } = serveConsole(s);
  const entry = await fetch(`${s.url}/console/?token=${token}`, { redirect: 'manual' });
  expect([entry.status, entry.headers.get('location')]).toEqual([303, '/console/']);
  const cookie = (entry.headers.get('set-cookie') ?? '').split(';')[0]!;
  expect(cookie).toMatch(/^hookagent_console_auth_[0-9a-f]{8}=/);
  expect(cookie).not.toContain(token);
  expect((await fetch(`${s.url}/console/`, { headers: { cookie } })).status).toBe(200);
  const wrong = await fetch(`${s.url}/console/?token=${'0'.repeat(48)}`, { redirect: 'manual' });
  expect([wrong.status, ((await wrong.json()) as { message: string }).message]).toEqual([401, 'Wrong token: use the token in the console URL serve printed when it started']);
}, 60_000);
