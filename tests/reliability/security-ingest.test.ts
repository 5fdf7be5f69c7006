/**
 * Security at the edges, through `hookagent serve` and the CLI as users run them (issue 15,
 * items 6-12): the proxy header, GitLab signed webhooks' dedup key, unparseable request
 * targets, free-text custom event types, YAML alias bombs and oversized config files,
 * `--payload /dev/zero`, and control characters from payloads in every log format.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signStandardWebhooks } from '../../functions/core/auth/signatures';
import { readConfigFile } from '../../functions/core/config/file';
import { BIN, buildCli, runCli, type CliResult } from '../support/cli';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';
import { Tally } from './tally';

const tally = new Tally('security');
const GL_SIGNING = `whsec_${Buffer.from('a gitlab signing token of 32 b.').toString('base64')}`;
const ENV = { GL_SECRET: GL_SIGNING };
/** Inside `allowed_ips`; the client-chosen entries in the tests are outside it. */
const ALLOWED = '140.82.112.5';
const OUTSIDE = '203.0.113.9';
/** What a terminal would act on: ESC (CSI sequences), the one-byte CSI U+009B, BEL, a bidi override. */
const HOSTILE = 'x\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202eevil';

let dir: string;
let proxied: Serve;
let chained: Serve;
/** Each serve owns its config dir and store; the custom subscriptions' secrets by serve. */
const secrets = new Map<Serve, { ci: string; failures: string }>();

async function cli(args: string[], configDir = dir): Promise<CliResult> {
  return runCli(['--config-dir', configDir, ...args], ENV);
}

async function configDirWithSubscriptions(): Promise<{ configDir: string; ci: string; failures: string }> {
  const configDir = mkdtempSync(join(tmpdir(), 'hookagent-sec-ingest-'));
  writeFileSync(join(configDir, 'config.yaml'), [
    'webhooks:',
    '  gitlab: { secret: ${GL_SECRET} }',
    '  allowed_ips: [140.82.112.0/20]',
  ].join('\n'));
  const found: Record<string, string> = {};
  for (const args of [
    ['gl', '--events', 'merge_request', '--deliver', 'log'],
    ['ci', '--deliver', 'log', '--prompt', 'Build: {build.name}'],
    ['failures', '--events', 'Build_Failed', '--deliver', 'log'],
  ]) {
    const created = await cli(['webhook', 'subscribe', ...args], configDir);
    expect(created.code).toBe(0);
    found[args[0] as string] = /whsec_[A-Za-z0-9+/=]+/.exec(created.stdout)?.[0] ?? '';
  }
  expect(found.ci).toMatch(/^whsec_/);
  return { configDir, ci: found.ci as string, failures: found.failures as string };
}

beforeAll(async () => {
  buildCli();
  const [a, b] = await Promise.all([configDirWithSubscriptions(), configDirWithSubscriptions()]);
  dir = a.configDir;
  [proxied, chained] = await Promise.all([
    startServe(a.configDir, ENV, { args: ['--trust-proxy'] }),
    startServe(b.configDir, ENV, { args: ['--trusted-proxies', '2', '--log-format', 'json'] }),
  ]);
  secrets.set(proxied, a).set(chained, b);
}, 120_000);

afterAll(async () => {
  tally.flush();
  await Promise.all([proxied, chained].filter(Boolean).map((s) => stopServe(s)));
});

interface Answer { status: number; body: Record<string, unknown> }

function post(serve: Serve, path: string, body: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(serve.url);
    const req = httpRequest({ hostname, port, path, method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Bytes straight onto the socket: the request line goes out exactly as written. */
function rawRequest(serve: Serve, requestLine: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(serve.url);
    const socket = connect(Number(port), hostname, () => {
      socket.end(`${requestLine}\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-forwarded-for: ${ALLOWED}\r\ncontent-length: 2\r\n\r\n{}`);
    });
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
    socket.on('end', () => {
      const [head = '', raw = ''] = text.split('\r\n\r\n');
      // A chunked body: drop the chunk-size lines.
      const body = /transfer-encoding: chunked/i.test(head) ? raw.split('\r\n').filter((_, i) => i % 2 === 1).join('') : raw;
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body });
    });
    socket.on('error', reject);
  });
}

const bearer = (serve: Serve = proxied) => ({ authorization: `Bearer ${secrets.get(serve)?.ci ?? ''}` });

describe('--trust-proxy takes the address the proxy appended, not one the client wrote', () => {
  test.each([
    [`${ALLOWED}, ${OUTSIDE}`, 403],
    [`${OUTSIDE}, ${ALLOWED}`, 202],
    [OUTSIDE, 403],
    [`${ALLOWED},${ALLOWED}, ${OUTSIDE}`, 403],
  ])('one proxy, X-Forwarded-For: %s → %i', async (forwarded, status) => {
    await tally.check(async () => {
      const answer = await post(proxied, '/webhooks/custom/ci', JSON.stringify({ type: 'deploy', n: forwarded }), { ...bearer(), 'x-forwarded-for': forwarded });
      expect({ forwarded, status: answer.status }).toEqual({ forwarded, status });
    });
  });

  test.each([
    [`${OUTSIDE}, ${ALLOWED}, 10.0.0.1`, 202],
    [`${ALLOWED}, ${OUTSIDE}, 10.0.0.1`, 403],
    // Fewer entries than trusted proxies: the request skipped one, nothing in it is trusted.
    [ALLOWED, 403],
  ])('--trusted-proxies 2, X-Forwarded-For: %s → %i', async (forwarded, status) => {
    await tally.check(async () => {
      const answer = await post(chained, '/webhooks/custom/ci', JSON.stringify({ type: 'deploy', chained: forwarded }), { ...bearer(chained), 'x-forwarded-for': forwarded });
      expect({ forwarded, status: answer.status }).toEqual({ forwarded, status });
    });
  });

  test('--trusted-proxies must be a whole number from 1 to 32 (usage error)', async () => {
    for (const value of ['0', '-1', 'two', '1.5']) {
      await tally.check(async () => {
        const result = await cli(['serve', '--port', '0', '--trusted-proxies', value]);
        expect({ value, code: result.code }).toEqual({ value, code: 2 });
        expect(result.stderr).toContain('--trusted-proxies takes a whole number from 1 to 32');
      });
    }
  });
});

test('GitLab signed webhooks: the signed webhook-id is the dedup key, whatever Idempotency-Key says', async () => {
  const body = JSON.stringify({ object_kind: 'merge_request', object_attributes: { iid: 1, action: 'open' } });
  const now = Math.floor(Date.now() / 1000);
  const signed = {
    'webhook-id': 'msg_signed_1', 'webhook-timestamp': String(now), 'webhook-signature': signStandardWebhooks(body, GL_SIGNING, 'msg_signed_1', now),
    'x-gitlab-event': 'Merge Request Hook', 'x-forwarded-for': ALLOWED,
  };
  await tally.check(async () => {
    const first = await post(proxied, '/webhooks/gitlab', body, { ...signed, 'idempotency-key': 'key-1' });
    expect(first.body).toMatchObject({ status: 'accepted', delivery_id: 'msg_signed_1' });
  });
  // A captured request replayed within the timestamp window with a fresh, unsigned key.
  for (const key of ['key-2', 'key-3']) {
    await tally.check(async () => {
      const replay = await post(proxied, '/webhooks/gitlab', body, { ...signed, 'idempotency-key': key });
      expect(replay).toEqual({ status: 200, body: { status: 'duplicate', delivery_id: 'msg_signed_1' } });
    });
  }
  // Unsigned (token) requests keep Idempotency-Key as their dedup key.
  await tally.check(async () => {
    const byToken = { 'x-gitlab-token': GL_SIGNING, 'x-gitlab-event': 'Merge Request Hook', 'x-forwarded-for': ALLOWED };
    expect((await post(proxied, '/webhooks/gitlab', body, { ...byToken, 'idempotency-key': 'tok-1' })).body).toMatchObject({ status: 'accepted', delivery_id: 'tok-1' });
    expect((await post(proxied, '/webhooks/gitlab', body, { ...byToken, 'idempotency-key': 'tok-1' })).body).toMatchObject({ status: 'duplicate' });
  });
});

test.each([
  'POST http://[/webhooks/github HTTP/1.1',
  'POST http://127.0.0.1:99999/webhooks/github HTTP/1.1',
  'POST http://a b/webhooks/github HTTP/1.1',
])('an unparseable request target is the client\'s fault: %s → 400', async (line) => {
  await tally.check(async () => {
    const answer = await rawRequest(proxied, line);
    expect(answer.status).toBe(400);
    expect(answer.headers.toLowerCase()).not.toContain('retry-after');
    expect(JSON.parse(answer.body)).toEqual({ status: 'error', code: 'bad_request', message: expect.any(String) });
  });
  expect(proxied.output()).not.toMatch(/ERROR .*local request failed/);
});

describe('custom event types are free text', () => {
  test.each([
    [{ type: 'Build Failed' }, {}, 'Build_Failed'],
    [{ event_type: 'deploy finished (prod) ✓' }, {}, 'deploy_finished_prod'],
    [{}, { 'x-event-type': 'Alert: disk > 90%' }, 'Alert:_disk_90'],
    [{ type: '!!!' }, {}, 'custom'],
    [{ type: 'x'.repeat(300) }, {}, 'x'.repeat(100)],
    [{ type: `a${HOSTILE}` }, {}, 'ax_2J_0_pwned_31m_evil'],
  ])('%j %j → accepted as %s', async (payload, headers, event) => {
    await tally.check(async () => {
      const answer = await post(proxied, '/webhooks/custom/ci', JSON.stringify(payload), { ...bearer(), 'x-forwarded-for': ALLOWED, ...headers });
      expect(answer).toEqual({ status: 202, body: expect.objectContaining({ status: 'accepted', event, subscriptions: ['ci'] }) });
    });
  });

  test('filters see the normalised name: --events Build_Failed takes "Build Failed", not "Build Passed"', async () => {
    const headers = { authorization: `Bearer ${secrets.get(proxied)?.failures ?? ''}`, 'x-forwarded-for': ALLOWED };
    await tally.check(async () => {
      expect((await post(proxied, '/webhooks/custom/failures', '{"type":"Build Failed"}', headers)).body).toMatchObject({ status: 'accepted', event: 'Build_Failed' });
    });
    await tally.check(async () => {
      expect((await post(proxied, '/webhooks/custom/failures', '{"type":"Build Passed"}', headers)).body).toEqual({ status: 'ignored', reason: 'Event not handled', event: 'Build_Passed' });
    });
  });
});

describe('control characters from payloads are escaped in every log format', () => {
  test('text log (serve default) and JSON lines (--log-format json)', async () => {
    const payload = JSON.stringify({ type: 'deploy', build: { name: HOSTILE } });
    for (const serve of [proxied, chained]) {
      const forwarded = serve === chained ? `${ALLOWED}, 10.0.0.1` : ALLOWED;
      const answer = await post(serve, '/webhooks/custom/ci', payload, { ...bearer(serve), 'x-forwarded-for': forwarded });
      expect(answer.status).toBe(202);
      const eventId = String(answer.body.event_id);
      await eventually(() => serve.output().split('\n').some((l) => l.includes(eventId) && l.includes('agent reply')), `the logged reply of ${eventId}`);
      const lines = serve.output().split('\n').filter((l) => l.includes(eventId));
      await tally.check(() => {
        // No raw control character anywhere in the log (a terminal would act on it).
        expect(serve.output()).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
      });
      await tally.check(() => {
        const reply = lines.find((l) => l.includes('agent reply')) ?? '';
        if (serve === chained) {
          // JSON lines stay valid JSON, and the value reads back exactly.
          expect((JSON.parse(reply) as { reply: string }).reply).toBe(`Build: ${HOSTILE}`);
        } else {
          expect(reply).toContain('\\u001b[2J\\u001b]0;pwned\\u0007\\u009b31m\\u202eevil');
        }
      });
    }
  });
});

describe('config.yaml: alias bombs and oversized files are refused fast, naming the key', () => {
  const bomb = [
    'a: &a ["x","x","x","x","x","x","x","x","x"]',
    ...'bcdefgh'.split('').map((c, i) => `${c}: &${c} [${Array(9).fill(`*${'abcdefgh'[i]}`).join(',')}]`),
    'webhooks:',
    '  allowed_ips: [*h,*h,*h,*h,*h,*h,*h,*h,*h]',
  ].join('\n');

  test.each([
    ['an alias bomb under 1 KB', bomb, 'webhooks.allowed_ips'],
    ['a billion laughs in an unknown key', bomb.replace('webhooks:\n  allowed_ips', 'lol:\n  more'), 'lol.more'],
    ['a file over 1 MB', `# ${'x'.repeat(1024 * 1024)}\n`, 'config.yaml'],
  ])('%s', async (_what, text, key) => {
    const configDir = mkdtempSync(join(tmpdir(), 'hookagent-sec-bomb-'));
    writeFileSync(join(configDir, 'config.yaml'), text);
    for (const args of [['webhook', 'list'], ['webhook', 'subscribe', 'x', '--deliver', 'log']]) {
      await tally.check(async () => {
        const started = Date.now();
        const result = await runBounded(['--config-dir', configDir, ...args], 10_000);
        const elapsed = Date.now() - started;
        expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('Invalid configuration') });
        expect(result.stderr).toContain(key);
        // Node's own start-up included (~0.3 s on a quiet machine); generous for a loaded one.
        expect(elapsed).toBeLessThan(5_000);
      });
    }
    await tally.check(() => {
      // The check itself, without process start-up: well within a second.
      const started = performance.now();
      const parsed = readConfigFile(configDir);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(parsed.ok ? '' : parsed.error.message).toContain(key);
    });
  });
});

test('webhook test --payload /dev/zero (and other endless or huge files): a bounded read and a clear error', async () => {
  const huge = join(dir, 'huge.json');
  writeFileSync(huge, `{"a":"${'x'.repeat(11 * 1024 * 1024)}"}`);
  for (const file of ['/dev/zero', '/dev/urandom', huge]) {
    await tally.check(async () => {
      const result = await runBounded(['--config-dir', dir, 'webhook', 'test', 'ci', '--payload', file], 15_000);
      expect({ file, code: result.code }).toEqual({ file, code: 1 });
      expect(result.stderr).toContain(`--payload: '${file}' is larger than 10 MB`);
    });
  }
});

test('webhook test shows payload control characters escaped, never raw', async () => {
  await tally.check(async () => {
    const result = await cli(['webhook', 'test', 'ci', '--payload', JSON.stringify({ build: { name: HOSTILE } })]);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(result.stdout).toContain('Build: x\\u001b[2J');
  });
});

/** The CLI with a deadline: an endless read fails the test instead of hanging it. */
function runBounded(args: string[], timeoutMs: number): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...ENV }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`hookagent ${args.join(' ')} did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
