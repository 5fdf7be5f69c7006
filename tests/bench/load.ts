/**
 * The load generator of the side-by-side server measurements, run in its own process (so
 * it does not share an event loop or a CPU account with any server): autocannon with a
 * fresh delivery id per request, for a duration or for an amount of requests. Writes the
 * load script into .build and runs it.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes';

export interface LoadResult {
  total: number;
  ok: number;
  non2xx: number;
  errors: number;
  seconds: number;
  p50: number;
  p99: number;
}

const LOAD_SCRIPT = `
const autocannon = require('autocannon');
const [url, connections, limit, event, signature, bodyFile] = process.argv.slice(2);
const body = require('node:fs').readFileSync(bodyFile, 'utf8');
// 'amount:N' sends N requests in all; a plain number runs for that many seconds.
const amount = limit.startsWith('amount:') ? Number(limit.slice('amount:'.length)) : undefined;
const id = 'bench-' + process.pid + '-' + Date.now().toString(36) + '-';
let n = 0;
autocannon({
  url, connections: Number(connections), ...(amount ? { amount } : { duration: Number(limit) }),
  requests: [{ method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-hub-signature-256': signature },
    setupRequest: (r) => ({ ...r, headers: { ...r.headers, 'x-github-delivery': id + n++ } }) }],
}).then((r) => process.stdout.write(JSON.stringify({ total: r.requests.total, ok: r['2xx'], non2xx: r.non2xx, errors: r.errors + r.timeouts, seconds: amount ? r.duration : Number(limit), p50: r.latency.p50, p99: r.latency.p99 })));
`;

export function runLoad(url: string, connections: number, seconds: number, event: string, signature: string, body: string): Promise<LoadResult> {
  return load(url, connections, String(seconds), event, signature, body);
}

/** `amount` requests in all over `connections`; `seconds` in the result is the time they took. */
export function runLoadAmount(url: string, connections: number, amount: number, event: string, signature: string, body: string): Promise<LoadResult> {
  return load(url, connections, `amount:${amount}`, event, signature, body);
}

function load(url: string, connections: number, limit: string, event: string, signature: string, body: string): Promise<LoadResult> {
  const dir = join(ROOT, '.build', 'bench', 'servers');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'load.cjs'), LOAD_SCRIPT);
  writeFileSync(join(dir, 'body.json'), body);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(dir, 'load.cjs'), url, String(connections), limit, event, signature, join(dir, 'body.json')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => {
      try {
        resolve(JSON.parse(out) as LoadResult);
      } catch {
        reject(new Error(`the load generator exited with ${code}: ${out.slice(0, 500)}`));
      }
    });
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
export function cpuSeconds(pid: number): number {
  const { readFileSync } = require('node:fs') as typeof import('node:fs');
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat (11 and 12 after the command name), in clock ticks (100 per second on Linux).
  // Children waited for (cutime, cstime) count too: adnanh/webhook forks a command per hook.
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
}

/** Resident memory of a process in MB, from /proc. */
export function rssMb(pid: number): number {
  const { readFileSync } = require('node:fs') as typeof import('node:fs');
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}
