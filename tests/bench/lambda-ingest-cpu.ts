/**
 * Bench: the deployed ingest Lambda's CPU per accepted event (issue 16). `ingest-cpu`
 * runs the handler over in-memory ports, which keep objects by reference: it leaves out
 * what the deployed function pays per event for the AWS SDK (serialising each request,
 * SigV4, the HTTP round trips and parsing the answers). Here the real bundle, built by
 * scripts/build-lambda.mjs exactly as for deployment, runs in a child process (with the
 * deployed NODE_OPTIONS) whose SDK clients point at a stub endpoint in this process: it
 * answers the DynamoDB and SQS JSON-protocol calls ingest makes with canned success
 * answers (SQS's with the MD5 of each body, which the SDK checks), and counts them.
 *
 * The child receives API Gateway HTTP API (v2) events carrying the signed 21 KB
 * `pull_request.opened` example of @octokit/webhooks-examples, each with a fresh delivery
 * id, one at a time as a Lambda container does. CPU per event is the child's
 * process.cpuUsage() (user + system, every thread) over a round of events; the floor is
 * the bare work any receiver does, in the same child: HMAC-SHA256 of the body, a
 * constant-time compare with the header, JSON.parse. Rounds alternate floor and handler;
 * the figure is the median of the per-round ratios with their [min–max].
 *
 * HOOKAGENT_BENCH_BASELINE=<git ref> also builds that ref's bundle (its own build script)
 * and measures it in the same rounds, for before/after figures from one run;
 * HOOKAGENT_BENCH_CPU_PROF=<dir> runs the children with --cpu-prof into that directory.
 */
import githubExamples from '@octokit/webhooks-examples';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sendJson, startLocalServer } from '../support/local-http';
import { median, type Measurement } from './stats';

const ROOT = resolve(__dirname, '..');
const OUT = join(ROOT, '.build', 'bench', 'lambda-ingest');
const SECRET = 'bench-github-secret';
const ROUNDS = 7;
const HANDLER_EVENTS = 200;
const FLOOR_EVENTS = 2000;
const WARMUP_EVENTS = 100;
const TARGET = 35;
const DEPLOYED_NODE_OPTIONS = '--enable-source-maps';
const QUEUE_PATH = '/123456789012/hookagent-bench-queue';

/** The `pull_request.opened` example (21 KB as JSON.stringify writes it). */
export function pullRequestOpened(): string {
  const group = githubExamples.find((g) => g.name === 'pull_request');
  const example = group?.examples.find((e) => (e as { action?: string }).action === 'opened');
  if (!example) throw new Error('no pull_request.opened example in @octokit/webhooks-examples');
  return JSON.stringify(example);
}

/** The subscription the stub's Scan returns, in DynamoDB JSON. */
const SUBSCRIPTION_ITEM = {
  name: { S: 'pr-review' }, events: { L: [{ S: 'pull_request' }] }, skills: { L: [] }, deliver: { L: [{ S: 'log' }] },
  state: { S: 'active' }, created_at: { S: '2026-11-22T00:00:00Z' }, updated_at: { S: '2026-11-22T00:00:00Z' }, secret: { S: 'whsec_x' },
};

/** Canned answers, as DynamoDB and SQS give them for these calls when they succeed. */
function answer(target: string, body: string): unknown {
  switch (target) {
    case 'DynamoDB_20120810.Scan': return { Items: [SUBSCRIPTION_ITEM], Count: 1, ScannedCount: 1 };
    case 'DynamoDB_20120810.BatchWriteItem': return { UnprocessedItems: {} };
    case 'DynamoDB_20120810.Query': return { Items: [], Count: 0, ScannedCount: 0 };
    case 'DynamoDB_20120810.GetItem': return {};
    case 'DynamoDB_20120810.PutItem':
    case 'DynamoDB_20120810.UpdateItem':
    case 'DynamoDB_20120810.TransactWriteItems': return {};
    case 'AmazonSQS.SendMessageBatch': {
      const input = JSON.parse(body) as { Entries: Array<{ Id: string; MessageBody: string }> };
      return {
        Successful: input.Entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: createHash('md5').update(e.MessageBody).digest('hex') })),
        Failed: [],
      };
    }
    default: return undefined;
  }
}

/** The child: the bundle's handler and the floor, driven over IPC. */
const CHILD = `
const { createHmac, timingSafeEqual } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { handler } = require(process.env.BENCH_BUNDLE);
const body = readFileSync(process.env.BENCH_BODY, 'utf8');
const secret = process.env.GITHUB_WEBHOOK_SECRET;
const signature = 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
let sequence = 0;
function event() {
  const id = 'bench-' + process.pid + '-' + (sequence++);
  return {
    version: '2.0', routeKey: '$default', rawPath: '/webhooks/github', rawQueryString: '',
    headers: {
      'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'GitHub-Hookshot/abc1234',
      'x-github-event': 'pull_request', 'x-github-delivery': id, 'x-github-hook-id': '1', 'x-hub-signature-256': signature,
    },
    requestContext: {
      accountId: '123456789012', apiId: 'api', domainName: 'api.execute-api.eu-west-1.amazonaws.com', domainPrefix: 'api',
      http: { method: 'POST', path: '/webhooks/github', protocol: 'HTTP/1.1', sourceIp: '140.82.115.1', userAgent: 'GitHub-Hookshot/abc1234' },
      requestId: id, routeKey: '$default', stage: '$default', time: '', timeEpoch: Date.now(),
    },
    body, isBase64Encoded: false,
  };
}
function context(id) {
  return { functionName: 'hookagent-bench-ingest', functionVersion: '$LATEST', invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:hookagent-bench-ingest',
    memoryLimitInMB: '256', awsRequestId: id, logGroupName: '/aws/lambda/hookagent-bench-ingest', logStreamName: 's', getRemainingTimeInMillis: () => 10000 };
}
function floor(e) {
  const expected = Buffer.from('sha256=' + createHmac('sha256', secret).update(e.body).digest('hex'));
  const given = Buffer.from(e.headers['x-hub-signature-256']);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new Error('floor: signature mismatch');
  return JSON.parse(e.body);
}
process.on('message', async (m) => {
  if (m.cmd === 'exit') return process.exit(0);
  try {
    const events = Array.from({ length: m.n }, event);
    const contexts = events.map((e) => context(e.requestContext.requestId));
    const start = process.cpuUsage();
    if (m.cmd === 'floor') {
      for (const e of events) floor(e);
    } else {
      for (let i = 0; i < events.length; i++) {
        const result = await handler(events[i], contexts[i]);
        if (result.statusCode !== 202) throw new Error('ingest answered ' + result.statusCode + ': ' + result.body);
      }
    }
    const used = process.cpuUsage(start);
    process.send({ cpuUs: used.user + used.system });
  } catch (error) {
    process.send({ error: String(error && error.stack || error) });
  }
});
process.send({ ready: true });
`;

function request(child: ChildProcess, message: { cmd: 'floor' | 'handler'; n: number }): Promise<number> {
  return new Promise((resolveRun, reject) => {
    const onMessage = (reply: { cpuUs?: number; error?: string }) => {
      child.off('message', onMessage);
      if (reply.error !== undefined || reply.cpuUs === undefined) reject(new Error(`the ingest bundle failed: ${reply.error}`));
      else resolveRun(reply.cpuUs);
    };
    child.on('message', onMessage);
    child.send(message);
  });
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Builds the ingest bundle of the checkout at `root` with its own scripts/build-lambda.mjs; returns LAMBDA_TASK_ROOT. */
function buildIngest(root: string, config: string, out: string): string {
  rmSync(out, { recursive: true, force: true });
  const built = spawnSync(process.execPath, [join(root, 'scripts', 'build-lambda.mjs'), '--config-dir', config, '--out', out], { cwd: root, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`scripts/build-lambda.mjs failed in ${root}: ${built.stderr}`);
  // A build script from before `--out` writes dist/lambda.
  return existsSync(join(out, 'ingest', 'index.js')) ? join(out, 'ingest') : join(root, 'dist', 'lambda', 'ingest');
}

/** The source of git ref `ref` in a directory of its own, sharing this checkout's node_modules. */
function checkout(ref: string): string {
  const dir = join(OUT, 'baseline-src');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const archive = spawnSync('git', ['archive', '--format=tar', ref], { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 });
  if (archive.status !== 0) throw new Error(`git archive ${ref} failed: ${archive.stderr.toString()}`);
  const tar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (tar.status !== 0) throw new Error(`could not unpack ${ref}: ${tar.stderr.toString()}`);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

interface Subject {
  label: string;
  taskRoot: string;
  child?: ChildProcess;
  exited?: Promise<void>;
  stderr: string;
  floors: number[];
  handlers: number[];
  ratios: number[];
  calls: Map<string, number>;
}

function spawnChild(subject: Subject, childFile: string, bodyFile: string, stubUrl: string, profile: string | undefined): Promise<void> {
  const child = spawn(process.execPath, [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve(profile)}`] : []), childFile], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: {
      PATH: process.env.PATH, NODE_OPTIONS: DEPLOYED_NODE_OPTIONS, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      BENCH_BUNDLE: join(subject.taskRoot, 'index.js'), BENCH_BODY: bodyFile, LAMBDA_TASK_ROOT: subject.taskRoot, GITHUB_WEBHOOK_SECRET: SECRET,
      HOOKAGENT_STAGE: 'bench', QUEUE_URL: `${stubUrl}${QUEUE_PATH}`, PAYLOAD_BUCKET: 'hookagent-bench-payloads',
      AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDBENCH', AWS_SECRET_ACCESS_KEY: 'bench-secret-key', AWS_SESSION_TOKEN: 'bench-session-token',
      AWS_ENDPOINT_URL_DYNAMODB: stubUrl, AWS_ENDPOINT_URL_SQS: stubUrl, AWS_LAMBDA_FUNCTION_NAME: 'hookagent-bench-ingest',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
    },
  });
  subject.child = child;
  // The function's log lines (stdout in Lambda too) are read and dropped.
  child.stdout!.resume();
  child.stderr!.on('data', (chunk: Buffer) => {
    subject.stderr = (subject.stderr + chunk.toString()).slice(-4000);
  });
  subject.exited = new Promise<void>((done) => child.on('exit', () => done()));
  return new Promise<void>((ready, reject) => {
    child.once('message', () => ready());
    void subject.exited!.then(() => reject(new Error(`the ${subject.label} child exited before it was ready: ${subject.stderr}`)));
  });
}

async function stopChild(subject: Subject): Promise<void> {
  const child = subject.child;
  if (!child || !subject.exited) return;
  // A clean exit, so that --cpu-prof writes its profile.
  if (child.connected) child.send({ cmd: 'exit' });
  const timer = setTimeout(() => child.kill('SIGTERM'), 10_000);
  await subject.exited;
  clearTimeout(timer);
}

export async function benchLambdaIngestCpu(): Promise<Measurement> {
  // 1. The bundle, exactly as deployed (same script, same esbuild settings, config validated);
  // with HOOKAGENT_BENCH_BASELINE=<git ref>, also that ref's bundle, measured in the same rounds.
  mkdirSync(OUT, { recursive: true });
  const config = mkdtempSync(join(tmpdir(), 'hookagent-bench-lambda-'));
  writeFileSync(join(config, 'config.yaml'), 'webhooks:\n  github: { secret: ${GITHUB_WEBHOOK_SECRET} }\n');
  const subjects: Subject[] = [{ label: 'this checkout', taskRoot: buildIngest(ROOT, config, join(OUT, 'dist')), stderr: '', floors: [], handlers: [], ratios: [], calls: new Map() }];
  const baselineRef = process.env.HOOKAGENT_BENCH_BASELINE;
  if (baselineRef) {
    const source = checkout(baselineRef);
    subjects.push({ label: baselineRef, taskRoot: buildIngest(source, config, join(OUT, 'baseline-dist')), stderr: '', floors: [], handlers: [], ratios: [], calls: new Map() });
  }
  const body = pullRequestOpened();
  const bodyFile = join(OUT, 'pull_request.opened.json');
  writeFileSync(bodyFile, body);
  const childFile = join(OUT, 'child.cjs');
  writeFileSync(childFile, CHILD);

  // 2. The stub endpoint: canned answers, every call counted (to the subject running at the time).
  let current: Subject | undefined;
  const unknown: string[] = [];
  const stub = await startLocalServer((req, res) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    if (current) current.calls.set(target, (current.calls.get(target) ?? 0) + 1);
    const reply = answer(target, req.body);
    if (reply === undefined) {
      unknown.push(target);
      return sendJson(res, 400, { __type: 'UnknownOperationException', message: `the stub does not answer ${target}` }, { 'content-type': 'application/x-amz-json-1.0' });
    }
    sendJson(res, 200, reply, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'bench' });
  });

  // 3. The children, as Lambda runs the function (LAMBDA_TASK_ROOT, the packaged config, the deployed NODE_OPTIONS).
  const profile = process.env.HOOKAGENT_BENCH_CPU_PROF;
  try {
    for (const subject of subjects) {
      await spawnChild(subject, childFile, bodyFile, stub.url, profile);
      await request(subject.child!, { cmd: 'floor', n: FLOOR_EVENTS });
      await request(subject.child!, { cmd: 'handler', n: WARMUP_EVENTS });
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const subject of subjects) {
        const child = subject.child!;
        const floorUs = (await request(child, { cmd: 'floor', n: FLOOR_EVENTS })) / FLOOR_EVENTS;
        current = subject;
        const handlerUs = (await request(child, { cmd: 'handler', n: HANDLER_EVENTS })) / HANDLER_EVENTS;
        current = undefined;
        subject.floors.push(floorUs);
        subject.handlers.push(handlerUs);
        subject.ratios.push(handlerUs / floorUs);
      }
    }
    if (unknown.length > 0) throw new Error(`the handler made calls the stub does not answer: ${[...new Set(unknown)].join(', ')}`);
    const events = ROUNDS * HANDLER_EVENTS;
    const figures = (subject: Subject) => {
      const byOperation: Record<string, number> = {};
      let calls = 0;
      for (const [target, count] of subject.calls) {
        calls += count;
        byOperation[target.replace(/^DynamoDB_20120810\./, 'dynamodb:').replace(/^AmazonSQS\./, 'sqs:')] = round2(count / events);
      }
      return {
        ratio_median: round2(median(subject.ratios)), ratio_min: round2(Math.min(...subject.ratios)), ratio_max: round2(Math.max(...subject.ratios)),
        ratios: subject.ratios.map(round2), handler_us_median: round2(median(subject.handlers)), handler_us: subject.handlers.map(round2),
        floor_us_median: round2(median(subject.floors)), floor_us: subject.floors.map(round2),
        sdk_calls_per_event: round2(calls / events), sdk_calls_by_operation: byOperation, bundle_bytes: statSync(join(subject.taskRoot, 'index.js')).size,
      };
    };
    const [main, baseline] = subjects as [Subject, Subject | undefined];
    const ratio = median(main.ratios);
    return {
      name: 'deployed ingest bundle CPU per accepted event ÷ HMAC + JSON.parse (stub AWS endpoint)',
      value: ratio, unit: `× [${Math.min(...main.ratios).toFixed(1)}–${Math.max(...main.ratios).toFixed(1)}]`, target: `≤ ${TARGET}×`, met: ratio <= TARGET,
      floor: `HMAC-SHA256 verify + JSON.parse of the body in the same process: ${median(main.floors).toFixed(1)} µs (median); the handler ${median(main.handlers).toFixed(0)} µs`,
      detail: {
        ...figures(main),
        ...(baseline ? { baseline: { ref: baseline.label, ...figures(baseline) }, handler_vs_baseline_median: round2(median(main.handlers.map((h, i) => h / (baseline.handlers[i] as number)))) } : {}),
        rounds: ROUNDS, events_per_round: HANDLER_EVENTS, floor_events_per_round: FLOOR_EVENTS, body_bytes: Buffer.byteLength(body), node_options: DEPLOYED_NODE_OPTIONS,
      },
    };
  } finally {
    for (const subject of subjects) await stopChild(subject);
    await stub.close();
    rmSync(config, { recursive: true, force: true });
  }
}
