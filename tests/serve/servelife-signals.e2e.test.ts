/**
 * servelife (hunt 12, defect 1): a second stop signal during the grace ends serve at once,
 * whatever the kinds of the two signals, and also when serve is PID 1 (a container without
 * --init), where the kernel drops any signal PID 1 has no handler for. README, Stopping: "A
 * second `Ctrl-C` or SIGTERM during the grace ends serve at once (exit 130 / 143)".
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { BIN, buildCli, runCli } from '../support/cli';
import { startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe } from '../support/serve';

const env = { GH_SECRET: 'sig-secret', OPENAI_API_KEY: 'sk-sig' };
/** A model that never answers: an agent run stays in flight through the whole grace. */
let llm: LocalServer;

beforeAll(async () => {
  buildCli();
  llm = await startLocalServer(() => undefined);
}, 60_000);
afterAll(async () => llm.close());

async function configured(name: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-sig-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { github: { secret: ${GH_SECRET} } }',
    `agent: { provider: openai, model: m, base_url: ${llm.url}/v1, api_key: \${OPENAI_API_KEY}, timeout: 60s }`,
  ].join('\n'));
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', name, '--events', 'issues', '--prompt', 'Issue {issue.title}', '--deliver', 'log'], env)).code).toBe(0);
  return dir;
}

/** One issues event accepted, and its agent run started (the model was called). */
async function runInFlight(url: string, name: string): Promise<void> {
  const body = JSON.stringify({ action: 'opened', issue: { number: 1, title: `${name}-1` }, repository: { full_name: 'o/r' } });
  const before = llm.requests.length;
  const answer = await fetch(`${url}/webhooks/github`, { method: 'POST', body, headers: { 'x-github-event': 'issues', 'x-github-delivery': `${name}-1`, 'x-hub-signature-256': signHub(body, env.GH_SECRET) } });
  expect(answer.status).toBe(202);
  await eventually(() => llm.requests.length > before, 'agent call in flight');
}

const exitOf = (child: ChildProcess) => new Promise<{ code: number | null; signal: string | null }>((done) => child.on('exit', (code, signal) => done({ code, signal })));
const EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

test.each([
  ['SIGTERM', 'SIGTERM'],
  ['SIGINT', 'SIGTERM'],
  ['SIGTERM', 'SIGINT'],
  ['SIGINT', 'SIGINT'],
] as const)('%s then %s during the grace ends serve at once, with 128 + the second signal', async (first, second) => {
  const dir = await configured(`two-${first}-${second}`.toLowerCase());
  const serve = await startServe(dir, env, { args: ['--shutdown-grace', '20'] });
  const exit = exitOf(serve.child);
  await runInFlight(serve.url, 'x');
  serve.child.kill(first);
  await eventually(() => serve.output().includes('stopping'), 'stopping logged');
  const started = Date.now();
  serve.child.kill(second);
  const result = await exit;
  const took = Date.now() - started;
  // One stop only: no second graceful stop waiting out the grace, no `stopped` line counting returns twice.
  expect({ fast: took < 3_000, result, stoppedLines: serve.output().match(/ stopped /g)?.length ?? 0 })
    .toEqual({ fast: true, result: { code: EXIT[second], signal: null }, stoppedLines: 0 });
  expect(serve.output()).toContain(`second stop signal: stopping at once`);
}, 60_000);

// PID 1 of a new PID namespace, as in a container without --init (unshare needs root, as CI has).
const canUnshare = (() => {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('unshare', ['--pid', '--fork', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

(canUnshare ? test.each : test.skip.each)([
  ['SIGTERM', 'SIGTERM'],
  ['SIGINT', 'SIGTERM'],
] as const)('as PID 1 (a container): %s, then %s during the grace, ends serve at once', async (first, second) => {
  const dir = await configured(`pidone-${first}-${second}`.toLowerCase());
  const child = spawn('unshare', ['--pid', '--fork', '--kill-child', process.execPath, BIN, 'serve', '--config-dir', dir, '--port', '0', '--shutdown-grace', '20'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exit = exitOf(child);
  try {
    await eventually(() => /listening on (http:\S+)/.test(output), 'listening');
    const url = /listening on (http:\S+)/.exec(output)![1]!;
    // serve's pid as this namespace sees it (inside its own namespace it is 1).
    const inner = Number(execFileSync('pgrep', ['-P', String(child.pid)]).toString().trim().split('\n')[0]);
    await runInFlight(url, 'pidone');
    process.kill(inner, first);
    await eventually(() => output.includes('stopping'), 'stopping logged');
    const started = Date.now();
    process.kill(inner, second);
    const result = await exit;
    expect({ fast: Date.now() - started < 3_000, result }).toEqual({ fast: true, result: { code: EXIT[second], signal: null } });
  } finally {
    child.kill('SIGKILL');
  }
}, 60_000);
