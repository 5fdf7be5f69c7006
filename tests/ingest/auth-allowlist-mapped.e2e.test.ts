/**
 * `hookagent serve --host ::` (a dual-stack socket, which reports IPv4 clients as
 * `::ffff:a.b.c.d`) with `webhooks.allowed_ips` written in that mapped form (hunt 12 D2):
 * the address serve reports for a refused sender, copied into allowed_ips, lets it in, and
 * a mapped range covers the IPv4 addresses it maps.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { BIN, buildCli, runCli } from '../support/cli';

const GH = 'allowlist-mapped-secret';
const env = { GH, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
let dir: string;
let child: ChildProcess | undefined;

/** serve on `::` with this allowlist; resolves with a URL that reaches it over IPv4 loopback. */
function serveWith(allowed: string): Promise<string> {
  writeFileSync(join(dir, 'config.yaml'), `webhooks: { github: { secret: \${GH} }, allowed_ips: ["${allowed}"] }\n`);
  const started = spawn(process.execPath, [BIN, 'serve', '--config-dir', dir, '--host', '::', '--port', '0'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child = started;
  let output = '';
  started.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve, reject) => {
    started.stdout!.on('data', (c: Buffer) => {
      output += c.toString();
      const m = /listening on http:\/\/\[::\]:(\d+)/.exec(output);
      if (m) resolve(`http://127.0.0.1:${m[1]}`);
    });
    started.on('exit', (code) => reject(new Error(`serve exited ${code}: ${output}`)));
  });
}

async function stop(): Promise<void> {
  const running = child;
  child = undefined;
  if (!running || running.exitCode !== null || running.signalCode !== null) return;
  const exited = new Promise((r) => running.once('exit', r));
  running.kill('SIGTERM');
  await exited;
}

beforeAll(async () => {
  buildCli();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-auth-allow-'));
  writeFileSync(join(dir, 'config.yaml'), 'webhooks: { github: { secret: ${GH} } }\n');
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'pushes', '--events', 'github:push', '--deliver', 'log', '--agent', 'none', '--prompt', 'p'], env)).code).toBe(0);
}, 60_000);
afterEach(stop);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const push = (url: string, id: string) => {
  const body = '{"ref":"refs/heads/main","repository":{"full_name":"o/r"}}';
  return fetch(`${url}/webhooks/github`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': id, 'x-hub-signature-256': signHub(body, GH) } });
};

test('the address serve records for a refused request, put into allowed_ips, lets that sender in', async () => {
  let url = await serveWith('192.0.2.0/24');
  expect((await push(url, 'mapped-1')).status).toBe(403);
  await stop();
  const requests = JSON.parse((await runCli(['--config-dir', dir, 'webhook', 'requests', '--json'], env)).stdout) as Array<{ source_ip?: string; status: number }>;
  const seen = requests.find((r) => r.status === 403)?.source_ip;
  expect(seen).toBe('::ffff:127.0.0.1');

  url = await serveWith(seen!);
  const again = await push(url, 'mapped-2');
  expect({ status: again.status, body: await again.json() }).toMatchObject({ status: 202, body: { status: 'accepted' } });
}, 60_000);

test('an IPv4-mapped range (::ffff:127.0.0.0/104) covers the IPv4 addresses it maps; one that maps other addresses does not', async () => {
  let url = await serveWith('::ffff:127.0.0.0/104');
  expect((await push(url, 'mapped-3')).status).toBe(202);
  await stop();
  url = await serveWith('::ffff:10.0.0.0/104');
  expect((await push(url, 'mapped-4')).status).toBe(403);
}, 60_000);
