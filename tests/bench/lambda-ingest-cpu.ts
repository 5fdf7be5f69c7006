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
 * HOOKAGENT_BENCH_CPU_PROF=<dir> runs the child with --cpu-prof into that directory.
 */
import githubExamples from '@octokit/webhooks-examples';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sendJson, startLocalServer } from '../support/local-http';
import { median, type Measurement } from './stats';

const ROOT = resolve(__dirname, '..');
const OUT = join(ROOT, '.build', 'bench', 'lambda-ingest');
const SECRET = 'bench-github-secret';
const ROUNDS = 5;
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

export async function benchLambdaIngestCpu(): Promise<Measurement> {
  // 1. The bundle, exactly as deployed (same script, same esbuild settings, config validated).
  mkdirSync(OUT, { recursive: true });
  const config = mkdtempSync(join(tmpdir(), 'hookagent-bench-lambda-'));
  writeFileSync(join(config, 'config.yaml'), 'webhooks:\n  github: { secret: ${GITHUB_WEBHOOK_SECRET} }\n');
  const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-lambda.mjs'), '--config-dir', config, '--out', join(OUT, 'dist')], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`scripts/build-lambda.mjs failed: ${built.stderr}`);
  const taskRoot = join(OUT, 'dist', 'ingest');
  const bundle = join(taskRoot, 'index.js');
  const body = pullRequestOpened();
  const bodyFile = join(OUT, 'pull_request.opened.json');
  writeFileSync(bodyFile, body);
  const childFile = join(OUT, 'child.cjs');
  writeFileSync(childFile, CHILD);

  // 2. The stub endpoint: canned answers, every call counted.
  const calls = new Map<string, number>();
  const unknown: string[] = [];
  const stub = await startLocalServer((req, res) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    calls.set(target, (calls.get(target) ?? 0) + 1);
    const reply = answer(target, req.body);
    if (reply === undefined) {
      unknown.push(target);
      return sendJson(res, 400, { __type: 'UnknownOperationException', message: `the stub does not answer ${target}` }, { 'content-type': 'application/x-amz-json-1.0' });
    }
    sendJson(res, 200, reply, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'bench' });
  });
  const total = () => [...calls.values()].reduce((a, b) => a + b, 0);

  // 3. The child, as Lambda runs the function (LAMBDA_TASK_ROOT, the packaged config, the deployed NODE_OPTIONS).
  const profile = process.env.HOOKAGENT_BENCH_CPU_PROF;
  const child = spawn(process.execPath, [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve(profile)}`] : []), childFile], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: {
      PATH: process.env.PATH, NODE_OPTIONS: DEPLOYED_NODE_OPTIONS, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      BENCH_BUNDLE: bundle, BENCH_BODY: bodyFile, LAMBDA_TASK_ROOT: taskRoot, GITHUB_WEBHOOK_SECRET: SECRET,
      HOOKAGENT_STAGE: 'bench', QUEUE_URL: `${stub.url}${QUEUE_PATH}`, PAYLOAD_BUCKET: 'hookagent-bench-payloads',
      AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDBENCH', AWS_SECRET_ACCESS_KEY: 'bench-secret-key', AWS_SESSION_TOKEN: 'bench-session-token',
      AWS_ENDPOINT_URL_DYNAMODB: stub.url, AWS_ENDPOINT_URL_SQS: stub.url, AWS_LAMBDA_FUNCTION_NAME: 'hookagent-bench-ingest',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
    },
  });
  // The function's log lines (stdout in Lambda too) are read and dropped.
  let stderr = '';
  child.stdout!.resume();
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((done) => child.on('exit', () => done()));
  try {
    await new Promise<void>((ready, reject) => {
      child.once('message', () => ready());
      void exited.then(() => reject(new Error(`the child exited before it was ready: ${stderr}`)));
    });
    await request(child, { cmd: 'floor', n: FLOOR_EVENTS });
    await request(child, { cmd: 'handler', n: WARMUP_EVENTS });

    const floors: number[] = [];
    const handlers: number[] = [];
    const ratios: number[] = [];
    const before = new Map(calls);
    const callsBefore = total();
    for (let round = 0; round < ROUNDS; round++) {
      const floorUs = (await request(child, { cmd: 'floor', n: FLOOR_EVENTS })) / FLOOR_EVENTS;
      const handlerUs = (await request(child, { cmd: 'handler', n: HANDLER_EVENTS })) / HANDLER_EVENTS;
      floors.push(floorUs);
      handlers.push(handlerUs);
      ratios.push(handlerUs / floorUs);
    }
    if (unknown.length > 0) throw new Error(`the handler made calls the stub does not answer: ${[...new Set(unknown)].join(', ')}`);
    const events = ROUNDS * HANDLER_EVENTS;
    const perCall: Record<string, number> = {};
    for (const [target, count] of calls) {
      const delta = count - (before.get(target) ?? 0);
      if (delta > 0) perCall[target.replace(/^DynamoDB_20120810\./, 'dynamodb:').replace(/^AmazonSQS\./, 'sqs:')] = round2(delta / events);
    }
    const ratio = median(ratios);
    return {
      name: 'deployed ingest bundle CPU per accepted event ÷ HMAC + JSON.parse (stub AWS endpoint)',
      value: ratio, unit: '×', target: `≤ ${TARGET}×`, met: ratio <= TARGET,
      detail: {
        ratio_median: round2(ratio), ratio_min: round2(Math.min(...ratios)), ratio_max: round2(Math.max(...ratios)), ratios: ratios.map(round2),
        handler_us_median: round2(median(handlers)), handler_us: handlers.map(round2),
        floor_us_median: round2(median(floors)), floor_us: floors.map(round2),
        sdk_calls_per_event: round2((total() - callsBefore) / events), sdk_calls_by_operation: perCall,
        rounds: ROUNDS, events_per_round: HANDLER_EVENTS, floor_events_per_round: FLOOR_EVENTS,
        body_bytes: Buffer.byteLength(body), bundle_bytes: statSync(bundle).size, node_options: DEPLOYED_NODE_OPTIONS,
      },
    };
  } finally {
    child.kill('SIGTERM');
    await exited;
    await stub.close();
    rmSync(config, { recursive: true, force: true });
  }
}
