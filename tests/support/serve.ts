/** `hookagent serve` as a child process, as users run it; used by e2e, reliability and bench. */
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from './cli';

export interface Serve {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts serve on a free port; resolves once it listens. Its output is kept unless `quiet`. */
export function startServe(dir: string, env: NodeJS.ProcessEnv, options: { quiet?: boolean; args?: string[] } = {}): Promise<Serve> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--config-dir', dir, '--port', '0', ...(options.args ?? [])], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let listening = false;
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const onData = (chunk: Buffer) => {
      if (listening && options.quiet) return;
      output += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match && !listening) {
        listening = true;
        resolve({ child, url: match[1] as string, output: () => output, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then((code) => reject(new Error(`serve exited with ${code}:\n${output}`)));
  });
}

/** Stops serve with SIGTERM (graceful) or SIGKILL; resolves with its exit code. */
export async function stopServe(serve: Serve, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill(signal);
  return serve.exited;
}

/** Resolves when `check` holds, re-checking as the service works (no fixed sleep). */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
