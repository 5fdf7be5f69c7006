/**
 * servelife (hunt 12, defect 2): SIGTERM while senders hold keep-alive connections
 * (Alertmanager's and most HTTP clients' default). README, Stopping: serve stops accepting,
 * lets requests being answered finish, and exits; with no agent run in flight there is
 * nothing to wait for. Requests already being answered get their answer with
 * `Connection: close`; a request that still comes on an open connection gets a 503 with
 * Retry-After, never a reset; every 202 is in the store.
 */
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

beforeAll(() => buildCli(), 60_000);

async function subscribed(): Promise<{ dir: string; secret: string }> {
  const dir = tempConfigDir('', 'hookagent-ka-');
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 's1', '--prompt', 'hi {x}', '--deliver', 'log'])).code).toBe(0);
  const shown = await runCli(['--config-dir', dir, 'webhook', 'show', 's1', '--json', '--show-secret']);
  return { dir, secret: (JSON.parse(shown.stdout) as { secret: string }).secret };
}

const exitOf = (serve: Serve) => new Promise<{ at: number; code: number | null }>((done) => serve.child.on('exit', (code) => done({ at: Date.now(), code })));

test('a stream of requests on keep-alive connections at SIGTERM: no reset, a 503 with Retry-After at most, every 202 stored, and serve exits without waiting out the grace', async () => {
  const { dir, secret } = await subscribed();
  const serve = await startServe(dir, {}, { args: ['--shutdown-grace', '6'] });
  const exited = exitOf(serve);
  const port = Number(new URL(serve.url).port);
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  const outcomes: Record<string, number> = {};
  const refusals: Array<{ retryAfter?: string; connection?: string }> = [];
  const count = (key: string) => (outcomes[key] = (outcomes[key] ?? 0) + 1);
  let sent = 0;
  /** Resolves true for a 202; a sender goes on only then, as one backs off on a 503 or an error. */
  const one = () => new Promise<boolean>((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/webhooks/custom/s1', method: 'POST', agent, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => {
        count(String(res.statusCode));
        if (res.statusCode === 503) refusals.push({ retryAfter: res.headers['retry-after'], connection: res.headers.connection });
        resolve(res.statusCode === 202);
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A new connection refused once serve closed its port is a clean refusal; a reset is not.
      count(error.code ?? 'error');
      resolve(false);
    });
    req.end(JSON.stringify({ x: sent++ }));
  });
  const loop = async () => {
    while (await one());
  };
  const loops = [loop(), loop()];
  await eventually(() => (outcomes['202'] ?? 0) >= 50, '50 accepted');
  const signalled = Date.now();
  serve.child.kill('SIGTERM');
  const { at, code } = await exited;
  await Promise.all(loops);
  agent.destroy();
  expect({ code, resets: outcomes.ECONNRESET ?? 0, exitedWithinMs3000: at - signalled < 3_000 }).toEqual({ code: 0, resets: 0, exitedWithinMs3000: true });
  expect(Object.keys(outcomes).filter((k) => !['202', '503', 'ECONNREFUSED'].includes(k))).toEqual([]);
  for (const refusal of refusals) expect(refusal).toEqual({ retryAfter: expect.stringMatching(/^\d+$/), connection: 'close' });
  // Nothing answered 202 is lost.
  const stored = JSON.parse((await runCli(['--config-dir', dir, 'webhook', 'events', 's1', '--json', '--limit', '1000'])).stdout) as unknown[];
  expect(stored.length).toBeGreaterThanOrEqual(outcomes['202'] ?? 0);
}, 60_000);

test('one request whose body is still arriving at SIGTERM: answered 202 with Connection: close, then serve exits without waiting out the grace', async () => {
  const { dir, secret } = await subscribed();
  const serve = await startServe(dir, {}, { args: ['--shutdown-grace', '6'] });
  const exited = exitOf(serve);
  const port = Number(new URL(serve.url).port);
  const body = JSON.stringify({ x: 1 });
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk.toString()));
  await new Promise((r) => socket.once('connect', r));
  // HTTP/1.1 keep-alive (the default); `Expect: 100-continue` makes serve say when it has the request's headers.
  socket.write(`POST /webhooks/custom/s1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n${body.slice(0, 4)}`);
  await eventually(() => answer.includes('100 Continue'), 'the request being read');
  const signalled = Date.now();
  serve.child.kill('SIGTERM');
  await eventually(() => serve.output().includes('stopping'), 'stopping logged');
  socket.write(body.slice(4));
  const { at, code } = await exited;
  socket.destroy();
  const final = answer.slice(answer.lastIndexOf('HTTP/1.1 '));
  expect(final).toMatch(/^HTTP\/1\.1 202/);
  expect(final.toLowerCase()).toContain('connection: close');
  expect({ code, exitedWithinMs3000: at - signalled < 3_000 }).toEqual({ code: 0, exitedWithinMs3000: true });
}, 60_000);

test('a request on an idle kept-alive connection just after SIGTERM is answered 503 with Retry-After and Connection: close, never reset', async () => {
  const { dir, secret } = await subscribed();
  const serve = await startServe(dir, {}, { args: ['--shutdown-grace', '6'] });
  const exited = exitOf(serve);
  const port = Number(new URL(serve.url).port);
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  let closed = false;
  socket.on('data', (chunk) => (answer += chunk.toString()));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  await new Promise((r) => socket.once('connect', r));
  const post = (x: number) => {
    const body = JSON.stringify({ x });
    socket.write(`POST /webhooks/custom/s1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  };
  try {
    post(1);
    // Answers are chunked: the last chunk ends the first one.
    await eventually(() => /^HTTP\/1\.1 202[^]*\r\n0\r\n\r\n$/.test(answer), 'the first answer');
    expect(answer.toLowerCase()).toContain('connection: keep-alive');
    answer = '';
    serve.child.kill('SIGTERM');
    await eventually(() => serve.output().includes('stopping'), 'stopping logged');
    // The client sends its next request right away, as one that just had an answer does.
    post(2);
    await eventually(() => closed, 'the connection closed by serve');
    const { code } = await exited;
    expect(code).toBe(0);
    expect(answer).toMatch(/^HTTP\/1\.1 503/);
    expect(answer.toLowerCase()).toMatch(/\r\nretry-after: \d+\r\n/);
    expect(answer.toLowerCase()).toContain('connection: close');
  } finally {
    socket.destroy();
    await stopServe(serve);
  }
}, 60_000);
