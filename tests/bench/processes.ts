/** Child processes for the side-by-side benchmarks: serve, and the peers it is compared with. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '..');
const BIN = join(ROOT, 'bin', 'hookagent.cjs');
const SCRIPTS = join(ROOT, '.build', 'bench', 'servers');
export const QUIET_ENV = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

export interface Running {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Spawns a process and resolves with the URL it prints (`listening on http://…`). */
function startListening(args: string[], env: NodeJS.ProcessEnv): Promise<Running> {
  return new Promise((resolveStart, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...QUIET_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let url: string | undefined;
    const exited = new Promise<void>((done) => child.on('exit', () => done()));
    const onData = (chunk: Buffer) => {
      if (url) return; // the rest is the service's log: read and dropped
      output += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        url = match[1] as string;
        resolveStart({ url, child, stop: async () => { child.kill('SIGTERM'); await exited; } });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(() => reject(new Error(`${args.join(' ')} exited before listening:\n${output.slice(-2000)}`)));
  });
}

/** The CLI, run to completion; throws with its stderr when it fails. */
export function hookagent(args: string[], env: NodeJS.ProcessEnv = {}): string {
  const run = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...QUIET_ENV, ...env } });
  if (run.status !== 0) throw new Error(`hookagent ${args.join(' ')} failed: ${run.stderr}`);
  return run.stdout;
}

export function configDir(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-bench-'));
  writeFileSync(join(dir, 'config.yaml'), yaml);
  return dir;
}

export function startServe(dir: string, env: NodeJS.ProcessEnv): Promise<Running> {
  return startListening([BIN, 'serve', '--config-dir', dir, '--port', '0', '--log-format', 'json'], env);
}

/** Peer (a): the floor of a durable-less receiver: read the body, verify the HMAC, answer 202. */
const BARE_SERVER = `
const { createServer } = require('node:http');
const { createHmac, timingSafeEqual } = require('node:crypto');
const secret = process.env.GH_SECRET;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const expected = Buffer.from('sha256=' + createHmac('sha256', secret).update(body).digest('hex'));
    const given = Buffer.from(String(req.headers['x-hub-signature-256'] || ''));
    const ok = given.length === expected.length && timingSafeEqual(given, expected);
    res.writeHead(ok ? 202 : 401, { 'content-type': 'application/json' });
    res.end(ok ? '{"status":"accepted"}' : '{"status":"error"}');
  });
});
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/** Peer (b): @octokit/webhooks' Node middleware, verifying and dispatching to a handler. */
const OCTOKIT_SERVER = `
import { createServer } from 'node:http';
import { Webhooks, createNodeMiddleware } from '@octokit/webhooks';
const webhooks = new Webhooks({ secret: process.env.GH_SECRET });
webhooks.onAny(() => {});
const server = createServer(createNodeMiddleware(webhooks, { path: '/webhooks/github' }));
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

export function startPeer(kind: 'bare' | 'octokit', env: NodeJS.ProcessEnv): Promise<Running> {
  mkdirSync(SCRIPTS, { recursive: true });
  // Inside the repository, so the module resolves @octokit/webhooks from node_modules.
  const file = join(SCRIPTS, kind === 'bare' ? 'bare.cjs' : 'octokit.mjs');
  writeFileSync(file, kind === 'bare' ? BARE_SERVER : OCTOKIT_SERVER);
  return startListening([file], env);
}
