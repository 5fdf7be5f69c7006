/**
 * One local endpoint standing in for SQS and S3, passing DynamoDB on to dynalite, with a
 * hook that can delay, fail or script any call (hunt 10: the deployed Lambda modules under
 * AWS faults). SQS keeps real queues: SendMessageBatch/SendMessage append,
 * ChangeMessageVisibility re-times by receipt handle; the test plays the event source
 * mapping (receive, invoke the worker, delete what was not reported failed).
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { SQSEvent } from 'aws-lambda';
import { sendJson, startLocalServer, type Recorded } from './local-http';

const AMZ_JSON = { 'content-type': 'application/x-amz-json-1.0' };
const md5 = (text: string) => createHash('md5').update(text).digest('hex');

export interface QueuedMessage {
  id: string;
  body: string;
  receiveCount: number;
  sentAt: number;
  /** Not receivable before this epoch ms. */
  visibleAt: number;
  receipt?: string;
  attributes?: Record<string, unknown>;
}

export interface Call {
  service: 'dynamodb' | 'sqs' | 's3';
  operation: string;
  input: Record<string, unknown>;
  /** The raw request (S3: method and url). */
  request: Recorded;
  /** SQS sends: store the entries now, or only those whose batch entry Id `only` keeps (the hook then answers what it likes). */
  carryOut?: (only?: (id: string) => boolean) => void;
}

/** What the hook decides: pass it on, or answer this instead (after whatever the hook awaited). */
export type Decision = undefined | { status: number; body: unknown; afterPassing?: boolean };

export interface FaultyAws {
  url: string;
  queues: Map<string, QueuedMessage[]>;
  objects: Map<string, string>;
  calls: Call[];
  hook: (call: Call) => Promise<Decision> | Decision;
  /** Messages now receivable from `queueUrl`, up to `max`, marked received (visibility `visibilitySeconds`). */
  receive(queueUrl: string, max: number, visibilitySeconds: number): SQSEvent;
  /** The event source mapping's delete of the messages not reported failed. */
  deleteByReceipt(queueUrl: string, receipt: string): void;
  close(): Promise<void>;
}

export async function startFaultyAws(dynamoEndpoint: string): Promise<FaultyAws> {
  const queues = new Map<string, QueuedMessage[]>();
  const objects = new Map<string, string>();
  const calls: Call[] = [];
  let receipts = 0;
  let ids = 0;
  const state: FaultyAws = {
    url: '', queues, objects, calls, hook: () => undefined,
    receive(queueUrl, max, visibilitySeconds) {
      const now = Date.now();
      const queue = queues.get(queueUrl) ?? [];
      const picked = queue.filter((m) => m.visibleAt <= now).slice(0, max);
      for (const m of picked) {
        m.receiveCount += 1;
        m.visibleAt = now + visibilitySeconds * 1000;
        m.receipt = `rh-${m.id}-${++receipts}`;
      }
      return {
        Records: picked.map((m) => ({
          messageId: m.id, receiptHandle: m.receipt as string, body: m.body,
          attributes: { ApproximateReceiveCount: String(m.receiveCount), SentTimestamp: String(m.sentAt), SenderId: 'x', ApproximateFirstReceiveTimestamp: String(now) },
          messageAttributes: {}, md5OfBody: md5(m.body), eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:eu-west-1:0:q', awsRegion: 'eu-west-1',
        })),
      };
    },
    deleteByReceipt(queueUrl, receipt) {
      const queue = queues.get(queueUrl) ?? [];
      const index = queue.findIndex((m) => m.receipt === receipt);
      if (index >= 0) queue.splice(index, 1);
    },
    close: async () => {},
  };

  const answerSqs = (call: Call, res: ServerResponse, only: (id: string) => boolean = () => true) => {
    const input = call.input;
    const queueUrl = String(input.QueueUrl);
    if (!queues.has(queueUrl)) queues.set(queueUrl, []);
    const queue = queues.get(queueUrl) as QueuedMessage[];
    const now = Date.now();
    if (call.operation === 'SendMessageBatch' || call.operation === 'SendMessage') {
      const entries = call.operation === 'SendMessage'
        ? [{ Id: '', MessageBody: String(input.MessageBody), DelaySeconds: input.DelaySeconds as number | undefined, MessageAttributes: input.MessageAttributes }]
        : (input.Entries as Array<{ Id: string; MessageBody: string; DelaySeconds?: number; MessageAttributes?: unknown }>);
      const done = entries.filter((e) => only(e.Id)).map((e) => {
        const id = `msg-${++ids}`;
        queue.push({ id, body: e.MessageBody, receiveCount: 0, sentAt: now, visibleAt: now + 1000 * (e.DelaySeconds ?? 0), attributes: e.MessageAttributes as Record<string, unknown> });
        return { Id: e.Id, MessageId: id, MD5OfMessageBody: md5(e.MessageBody) };
      });
      if (call.operation === 'SendMessage') return sendJson(res, 200, { MessageId: done[0]?.MessageId, MD5OfMessageBody: done[0]?.MD5OfMessageBody }, AMZ_JSON);
      return sendJson(res, 200, { Successful: done, Failed: [] }, AMZ_JSON);
    }
    if (call.operation === 'ChangeMessageVisibility') {
      const m = queue.find((q) => q.receipt === input.ReceiptHandle);
      if (m) m.visibleAt = now + 1000 * Number(input.VisibilityTimeout);
      return sendJson(res, 200, {}, AMZ_JSON);
    }
    if (call.operation === 'GetQueueAttributes') {
      return sendJson(res, 200, { Attributes: { ApproximateNumberOfMessages: String(queue.filter((m) => m.visibleAt <= now).length) } }, AMZ_JSON);
    }
    return sendJson(res, 400, { __type: 'UnsupportedOperation', message: call.operation }, AMZ_JSON);
  };

  const server = await startLocalServer(async (req, res) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const [prefix, operation] = target.split('.') as [string, string];
    let call: Call;
    if (prefix?.startsWith('DynamoDB_')) call = { service: 'dynamodb', operation, input: JSON.parse(req.body || '{}') as Record<string, unknown>, request: req };
    else if (prefix === 'AmazonSQS') call = { service: 'sqs', operation, input: JSON.parse(req.body || '{}') as Record<string, unknown>, request: req };
    else call = { service: 's3', operation: req.method === 'PUT' ? 'PutObject' : 'GetObject', input: {}, request: req };
    const blackhole = { writeHead: () => ({ end: () => undefined }), end: () => undefined, setHeader: () => undefined } as unknown as ServerResponse;
    let carried = false;
    if (call.service === 'sqs') call.carryOut = (only) => {
      if (!carried) answerSqs(call, blackhole, only);
      carried = true;
    };
    calls.push(call);
    const decision = await state.hook(call);
    if (decision && !decision.afterPassing) {
      if (call.service === 's3') return void res.writeHead(decision.status, { 'content-type': 'application/xml' }).end(String(decision.body));
      return sendJson(res, decision.status, decision.body, AMZ_JSON);
    }
    if (call.service === 'dynamodb') {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
      const answer = await fetch(dynamoEndpoint, { method: 'POST', headers, body: req.body });
      const text = await answer.text();
      if (decision?.afterPassing) return sendJson(res, decision.status, decision.body, AMZ_JSON);
      return void res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/x-amz-json-1.0' }).end(text);
    }
    if (call.service === 'sqs') {
      if (decision?.afterPassing) {
        // Carried out, but the caller is told otherwise (a 5xx after SQS stored it, or a lost answer).
        call.carryOut?.();
        return sendJson(res, decision.status, decision.body, AMZ_JSON);
      }
      return answerSqs(call, res);
    }
    const path = decodeURIComponent(req.url.split('?')[0] as string).slice(1);
    if (req.method === 'PUT') {
      objects.set(path, req.body);
      return void res.writeHead(200, { etag: `"${md5(req.body)}"` }).end();
    }
    const object = objects.get(path);
    if (object === undefined) return void res.writeHead(404, { 'content-type': 'application/xml' }).end('<Error><Code>NoSuchKey</Code><Message>none</Message></Error>');
    return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(object);
  });
  state.url = server.url;
  state.close = () => server.close();
  return state;
}
