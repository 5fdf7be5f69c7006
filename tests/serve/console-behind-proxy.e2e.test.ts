/**
 * serve's console sits on the webhook port, the one proxies and tunnels expose. nginx's plain
 * `proxy_pass http://127.0.0.1:8644;` adds no X-Forwarded-For, Forwarded or X-Real-IP and
 * sets Host to 127.0.0.1:8644: through it every client looked local, and anyone reaching
 * the proxy read every event and paused subscriptions (hunt 10 D1). The console on serve's
 * port now always asks for a token: serve keeps it in its data dir (mode 0600, the same
 * after a restart) and prints the link in its start banner, never in its log.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, runCli } from '../support/cli';
import { startServe, stopServe, type Serve } from '../support/serve';
import { serveConsole } from '../console/serve-console-link';

const env = { GH_SECRET: 'console-proxy-webhook-secret', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
let dir: string;
let serve: Serve;
let proxy: Server;
let proxyUrl: string;

/** nginx `location / { proxy_pass http://<serve>; }` with no proxy_set_header: Host = $proxy_host, Connection: close, nothing added. */
function startNginxLikeProxy(upstream: URL): Promise<Server> {
  const server = createServer((req, res) => {
    const headers = { ...req.headers, host: upstream.host, connection: 'close' };
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(out);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const start = () => startServe(dir, env, { args: ['--log-format', 'json'] });
const state = async () => (JSON.parse((await runCli(['--config-dir', dir, 'webhook', 'show', 'alerts', '--json'], env)).stdout) as { state: string }).state;
/** serve's JSON log lines (its banner goes to stdout as text). */
const logLines = () => serve.output().split('\n').filter((line) => line.startsWith('{'));

beforeAll(async () => {
  buildCli();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-console-proxy-'));
  writeFileSync(join(dir, 'config.yaml'), 'webhooks: { github: { secret: ${GH_SECRET} } }\n');
  serve = await start();
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'alerts', '--events', 'alert', '--prompt', 'x {a}', '--deliver', 'log'], env)).code).toBe(0);
  proxy = await startNginxLikeProxy(new URL(serve.url));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
}, 90_000);
afterAll(async () => {
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  if (serve) await stopServe(serve);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the banner prints the console link with its token; the token is kept in the data dir, readable by its owner only', () => {
  const link = serveConsole(serve);
  expect(serve.output()).toContain(`  console: ${serve.url}/console?token=${link.token} (from this machine only)\n`);
  expect(link.token).toMatch(/^[0-9a-f]{48}$/);
  const file = join(dir, 'data', 'console-token');
  expect(readFileSync(file, 'utf8').trim()).toBe(link.token);
  expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
});

test('through a same-host proxy that adds no forwarding header, the console shows nothing and changes nothing without the token', async () => {
  expect((await fetch(`${proxyUrl}/health`)).status).toBe(200);
  const page = await fetch(`${proxyUrl}/console`);
  const pageText = await page.text();
  const subscriptions = await fetch(`${proxyUrl}/console/api/subscriptions`);
  const body = await subscriptions.text();
  expect({ page: page.status, subscriptions: subscriptions.status }).toEqual({ page: 401, subscriptions: 401 });
  expect(body).not.toContain('alerts');
  // No session, no CSRF token: the page that handed them out is not served.
  expect(page.headers.get('set-cookie')).toBeNull();
  expect(pageText).not.toContain('csrf-token');
  const pause = await fetch(`${proxyUrl}/console/api/subscriptions/alerts/pause`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(pause.status).toBe(401);
  expect(await state()).toBe('active');
  expect(((await (await fetch(`${proxyUrl}/console?token=${'0'.repeat(48)}`)).json()) as { message: string }).message).toBe('Wrong token: use the token in the console URL serve printed when it started');
});

test('on this machine too the token is asked for; the banner link sets an HttpOnly cookie (not the token) that opens the page, and Bearer serves scripts', async () => {
  const link = serveConsole(serve);
  expect((await fetch(`${serve.url}/console`)).status).toBe(401);
  expect((await fetch(`${serve.url}/console/api/events`)).status).toBe(401);
  const entry = await fetch(link.link, { redirect: 'manual' });
  expect([entry.status, entry.headers.get('location')]).toEqual([303, '/console']);
  const setCookie = entry.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(/^hookagent_console_auth_[0-9a-f]{8}=[^;]+; Path=\/console; HttpOnly; SameSite=Strict$/);
  expect(setCookie).not.toContain(link.token);
  const cookie = setCookie.split(';')[0]!;
  const page = await fetch(`${serve.url}/console`, { headers: { cookie } });
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<title>hookagent console</title>');
  const subscriptions = (await (await fetch(`${serve.url}/console/api/subscriptions`, { headers: link.headers })).json()) as Array<{ name: string }>;
  expect(subscriptions.map((s) => s.name)).toEqual(['alerts']);
});

test('a request a proxy forwarded (X-Forwarded-For) is still passed to the router, token or not', async () => {
  const link = serveConsole(serve);
  const forwarded = await fetch(`${serve.url}/console/api/subscriptions`, { headers: { ...link.headers, 'x-forwarded-for': '203.0.113.9' } });
  expect(forwarded.status).toBe(404);
  expect(await forwarded.text()).not.toContain('alerts');
  expect((await fetch(`${serve.url}/console?token=${link.token}`, { headers: { 'x-real-ip': '203.0.113.9' }, redirect: 'manual' })).status).toBe(404);
});

test('the token and the cookie stay valid after a restart; the token never reaches the JSON log', async () => {
  const link = serveConsole(serve);
  const entry = await fetch(link.link, { redirect: 'manual' });
  const cookie = (entry.headers.get('set-cookie') ?? '').split(';')[0]!;
  // A pause from the page (cookie, session and CSRF token) is logged: a line the token could have been in.
  const page = await fetch(`${serve.url}/console`, { headers: { cookie } });
  const session = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(await page.text())![1]!;
  const pause = await fetch(`${serve.url}/console/api/subscriptions/alerts/pause`, { method: 'POST', headers: { cookie: `${cookie}; ${session}`, 'x-csrf-token': csrf, 'content-type': 'application/json' }, body: '{}' });
  expect(pause.status).toBe(200);
  expect(await state()).toBe('paused');

  expect(await stopServe(serve)).toBe(0);
  const before = logLines();
  serve = await start();
  expect(serveConsole(serve).token).toBe(link.token);
  expect((await fetch(`${serve.url}/console/api/subscriptions`, { headers: { cookie } })).status).toBe(200);

  const lines = [...before, ...logLines()];
  expect(lines.some((line) => line.includes('"console pause"'))).toBe(true);
  expect(lines.filter((line) => line.includes(link.token))).toEqual([]);
}, 60_000);
