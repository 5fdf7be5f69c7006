/**
 * Fault hunt 7: serve's log goes to a file on the disk that fills up (`serve >> serve.log
 * 2>&1`, nohup). A log line that cannot be written must not stop the service: before, the
 * first line after the disk filled threw ENOSPC from stderr's write, uncaught, and serve
 * exited 1 with accepted events in flight (and could not say why: its stderr was full).
 *
 * Real parts: `hookagent serve` as a child process whose stderr is /dev/full (every write
 * fails with ENOSPC, as on a full disk), signed GitHub requests over HTTP, the event log
 * read from the SQLite store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { systemClock } from '../../functions/core/ports';
import { openLocalRuntime } from '../../functions/local/compose';
import { BIN, buildCli, runCli, tempConfigDir } from '../support/cli';
import { eventually } from '../support/serve';
import { Tally } from './tally';

const tally = new Tally('disk-full');
afterAll(() => tally.flush());

const FULL = '/dev/full';
const run = existsSync(FULL) ? test : test.skip;

beforeAll(() => buildCli(), 120_000);

/** serve with its stderr (the log) on a device where every write fails with ENOSPC. */
function serveLoggingTo(device: string, dir: string, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null> }> {
  const fd = openSync(device, 'w');
  const child = spawn(process.execPath, [BIN, 'serve', '--config-dir', dir, '--port', '0'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', fd] });
  closeSync(fd);
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) resolve({ child, url: match[1] as string, exited });
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code} before listening:\n${output}`)));
  });
}

run('a log that cannot be written (ENOSPC on stderr) does not stop serve: events are accepted and delivered, SIGTERM exits 0', async () => {
  const dir = tempConfigDir('webhooks: { github: { secret: ${GH_SECRET} } }\nagent: { provider: echo }\n', 'hookagent-logfull-');
  const env = { GH_SECRET: 'gh-secret' };
  try {
    expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'logged', '--events', 'issues', '--prompt', 'Issue {issue.title}', '--deliver', 'log'], env)).code).toBe(0);
    const serve = await serveLoggingTo(FULL, dir, env);
    const send = async (n: number) => {
      const body = JSON.stringify({ action: 'opened', issue: { number: n, title: `full-log-${n}` }, repository: { full_name: 'o/r' } });
      const response = await fetch(`${serve.url}/webhooks/github`, {
        method: 'POST', body,
        headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': `full-log-${n}`, 'x-hub-signature-256': signHub(body, 'gh-secret') },
      }).catch((error: unknown) => ({ status: 0, error }));
      return response.status;
    };
    // Each request logs lines (queued, delivered): the first of them used to kill serve.
    for (let n = 0; n < 5; n++) await tally.check(async () => expect(await send(n)).toBe(202));
    const runtime = await openLocalRuntime(join(dir, 'data'), { role: 'cli', clock: systemClock });
    try {
      await eventually(async () => (await runtime.events.listBySubscription('logged', 100)).filter((r) => r.status === 'delivered').length === 5 || serve.child.exitCode !== null, 'the events delivered');
      await tally.check(() => expect(serve.child.exitCode).toBeNull());
      await tally.check(async () => expect((await runtime.events.listBySubscription('logged', 100)).map((r) => r.status)).toEqual(Array(5).fill('delivered')));
    } finally {
      await runtime.close();
    }
    serve.child.kill('SIGTERM');
    await tally.check(async () => expect(await serve.exited).toBe(0));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
