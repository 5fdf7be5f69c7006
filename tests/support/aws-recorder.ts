/**
 * One local endpoint for the AWS services the functions call, recording each call as the
 * IAM action it needs and the resource it touches: DynamoDB requests are passed on to
 * dynalite, SQS sends are answered as SQS does (with the body's MD5), S3 objects are kept
 * in memory, SSM parameters come from a map. Point a bundle at it with
 * AWS_ENDPOINT_URL_{DYNAMODB,SQS,S3,SSM}. With `authorize`, a call it refuses is answered
 * as AWS answers a call IAM denies (AccessDenied), so the code's handling of that runs too.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson, startLocalServer } from './local-http';

export interface AwsCall {
  /** The IAM action, e.g. `dynamodb:PutItem` (SQS batch sends need `sqs:SendMessage`). */
  action: string;
  /** Table name, queue URL or parameter name. */
  resource: string;
}

export interface AwsRecorder {
  url: string;
  calls: AwsCall[];
  /** ChangeMessageVisibility calls: which receipt, how many seconds. */
  visibility: Array<{ receiptHandle: string; seconds: number }>;
  close(): Promise<void>;
}

const AMZ_JSON = { 'content-type': 'application/x-amz-json-1.0' };
const md5 = (text: string) => createHash('md5').update(text).digest('hex');

/** A message of a recorded queue (the CLI's operations read and move them). */
export interface RecordedMessage {
  id: string;
  body: string;
  receiveCount?: number;
  sentAt?: number;
  reason?: string;
  /** Hidden until this epoch ms after a receive. */
  hiddenUntil?: number;
  /** Sent with DelaySeconds (debounce): not yet receivable until this epoch ms, counted as delayed. */
  delayedUntil?: number;
}

export interface RecorderOptions {
  /** Where DynamoDB requests go (dynalite); without it they are answered 400. */
  dynamoEndpoint?: string;
  parameters: Record<string, string>;
  refuseSendsContaining?: string;
  /** Queue URL → its messages; sends to a listed queue are appended, receives and deletes act on them. */
  queues?: Record<string, RecordedMessage[]>;
  /** CloudFormation stack name → its outputs (DescribeStacks). */
  stacks?: Record<string, { status: string; outputs: Record<string, string> }>;
  /** CloudWatch metric name → the latest value GetMetricData answers. */
  metrics?: Record<string, number>;
  /** The status code GET /health answers (default 200). */
  healthStatus?: number;
  /** Whether IAM allows the call (read at each call); a refused one gets AccessDenied and is not carried out. */
  authorize?: (call: AwsCall) => boolean;
}

const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export async function startAwsRecorder(options: RecorderOptions): Promise<AwsRecorder> {
  const calls: AwsCall[] = [];
  const visibility: AwsRecorder['visibility'] = [];
  const objects = new Map<string, string>();
  /** Records the calls; true when one of them is denied. */
  const denied = (...made: AwsCall[]) => {
    calls.push(...made);
    return options.authorize !== undefined && made.some((call) => !options.authorize!(call));
  };
  const refuse = (res: ServerResponse, call: string, protocol: 'json' | 'xml') => {
    const message = `User: arn:aws:sts::000000000000:assumed-role/test is not authorized to perform: ${call}`;
    if (protocol === 'xml') return void res.writeHead(403, { 'content-type': 'application/xml' }).end(`<Error><Code>AccessDenied</Code><Message>${xml(message)}</Message><RequestId>r</RequestId></Error>`);
    sendJson(res, 400, { __type: 'com.amazon.coral.service#AccessDeniedException', message }, AMZ_JSON);
  };
  const server = await startLocalServer(async (req, res) => {
    const [service, operation] = String(req.headers['x-amz-target'] ?? '').split('.') as [string, string];
    if (String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
      // The query protocol (CloudFormation): form fields in, XML out.
      const form = new URLSearchParams(req.body);
      if (form.get('Action') === 'DescribeStacks') {
        const name = form.get('StackName') ?? '';
        if (denied({ action: 'cloudformation:DescribeStacks', resource: name })) return refuse(res, 'cloudformation:DescribeStacks', 'xml');
        const stack = options.stacks?.[name];
        if (!stack) {
          return void res.writeHead(400, { 'content-type': 'text/xml' }).end(`<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${xml(name)} does not exist</Message></Error><RequestId>r</RequestId></ErrorResponse>`);
        }
        const outputs = Object.entries(stack.outputs).map(([k, v]) => `<member><OutputKey>${xml(k)}</OutputKey><OutputValue>${xml(v)}</OutputValue></member>`).join('');
        return void res.writeHead(200, { 'content-type': 'text/xml' }).end(`<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member><StackName>${xml(name)}</StackName><StackId>arn:aws:cloudformation:eu-west-1:0:stack/${xml(name)}/1</StackId><CreationTime>2026-11-01T00:00:00Z</CreationTime><StackStatus>${stack.status}</StackStatus><Outputs>${outputs}</Outputs></member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DescribeStacksResponse>`);
      }
      calls.push({ action: `unknown:query.${form.get('Action')}`, resource: req.url });
      return void res.writeHead(400, { 'content-type': 'text/xml' }).end('<ErrorResponse><Error><Code>InvalidAction</Code><Message>not recorded</Message></Error></ErrorResponse>');
    }
    if (req.method === 'GET' && req.url === '/health') {
      calls.push({ action: 'http:GET', resource: '/health' });
      const status = options.healthStatus ?? 200;
      return sendJson(res, status, status === 200 ? { status: 'ok' } : { status: 'error', code: 'unavailable', message: 'down' });
    }
    // S3 bodies are any bytes (a reply, a transcript): only the JSON protocols are parsed.
    const input = (service ? JSON.parse(req.body || '{}') : {}) as Record<string, unknown>;
    const queue = typeof input.QueueUrl === 'string' ? options.queues?.[input.QueueUrl] : undefined;
    if (service === 'AmazonSQS' && operation === 'GetQueueUrl') {
      const url = Object.keys(options.queues ?? {}).find((u) => u.endsWith(`/${String(input.QueueName)}`));
      if (denied({ action: 'sqs:GetQueueUrl', resource: url ?? String(input.QueueName) })) return refuse(res, 'sqs:GetQueueUrl', 'json');
      if (!url) return sendJson(res, 400, { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'The specified queue does not exist.' }, AMZ_JSON);
      return sendJson(res, 200, { QueueUrl: url }, AMZ_JSON);
    }
    if (service === 'AmazonSQS' && queue && operation !== 'SendMessageBatch' && operation !== 'SendMessage') {
      const action = operation === 'ChangeMessageVisibilityBatch' ? 'ChangeMessageVisibility' : operation;
      if (denied({ action: `sqs:${action}`, resource: String(input.QueueUrl) })) return refuse(res, `sqs:${action}`, 'json');
      const now = Date.now();
      const delayed = (m: RecordedMessage) => m.delayedUntil !== undefined && m.delayedUntil > now;
      const receivable = (m: RecordedMessage) => !delayed(m) && (!m.hiddenUntil || m.hiddenUntil <= now);
      if (operation === 'GetQueueAttributes') {
        const visible = queue.filter(receivable).length;
        const waiting = queue.filter(delayed).length;
        return sendJson(res, 200, { Attributes: {
          ApproximateNumberOfMessages: String(visible), ApproximateNumberOfMessagesNotVisible: String(queue.length - visible - waiting),
          ApproximateNumberOfMessagesDelayed: String(waiting),
        } }, AMZ_JSON);
      }
      if (operation === 'ReceiveMessage') {
        const picked = queue.filter(receivable).slice(0, Number(input.MaxNumberOfMessages ?? 1));
        for (const m of picked) {
          m.receiveCount = (m.receiveCount ?? 0) + 1;
          m.hiddenUntil = now + 1000 * Number(input.VisibilityTimeout ?? 30);
        }
        return sendJson(res, 200, {
          Messages: picked.map((m) => ({
            MessageId: m.id, ReceiptHandle: `rh-${m.id}`, Body: m.body, MD5OfBody: md5(m.body),
            Attributes: { ApproximateReceiveCount: String(m.receiveCount), SentTimestamp: String(m.sentAt ?? now) },
            ...(m.reason ? { MessageAttributes: { reason: { DataType: 'String', StringValue: m.reason } } } : {}),
          })),
        }, AMZ_JSON);
      }
      if (operation === 'DeleteMessage') {
        const index = queue.findIndex((m) => `rh-${m.id}` === input.ReceiptHandle);
        if (index >= 0) queue.splice(index, 1);
        return sendJson(res, 200, {}, AMZ_JSON);
      }
      if (operation === 'ChangeMessageVisibilityBatch') {
        const entries = input.Entries as Array<{ Id: string; ReceiptHandle: string; VisibilityTimeout: number }>;
        for (const entry of entries) {
          const m = queue.find((q) => `rh-${q.id}` === entry.ReceiptHandle);
          if (m) m.hiddenUntil = now + 1000 * entry.VisibilityTimeout;
        }
        return sendJson(res, 200, { Successful: entries.map((e) => ({ Id: e.Id })), Failed: [] }, AMZ_JSON);
      }
    }
    if (service === 'GraniteServiceVersion20100801' && operation === 'GetMetricData') {
      const queries = input.MetricDataQueries as Array<{ Id: string; MetricStat: { Metric: { MetricName: string; Dimensions: Array<{ Value: string }> } } }>;
      if (denied(...queries.map((q) => ({ action: 'cloudwatch:GetMetricData', resource: `${q.MetricStat.Metric.MetricName} ${q.MetricStat.Metric.Dimensions.map((d) => d.Value).join(',')}` })))) return refuse(res, 'cloudwatch:GetMetricData', 'json');
      return sendJson(res, 200, {
        MetricDataResults: queries.map((q) => {
          const value = options.metrics?.[q.MetricStat.Metric.MetricName];
          return { Id: q.Id, StatusCode: 'Complete', Timestamps: value === undefined ? [] : [Math.floor(Date.now() / 1000) - 60], Values: value === undefined ? [] : [value] };
        }),
      }, AMZ_JSON);
    }
    if (service === 'AmazonSSM' && (operation === 'GetParametersByPath' || operation === 'DeleteParameter')) {
      const name = String(input.Path ?? input.Name);
      if (denied({ action: `ssm:${operation}`, resource: name })) return refuse(res, `ssm:${operation}`, 'json');
      if (operation === 'DeleteParameter') {
        if (!(name in options.parameters)) return sendJson(res, 400, { __type: 'ParameterNotFound', message: `${name} not found` }, AMZ_JSON);
        delete options.parameters[name];
        return sendJson(res, 200, {}, AMZ_JSON);
      }
      return sendJson(res, 200, { Parameters: Object.keys(options.parameters).filter((n) => n.startsWith(name)).map((n) => ({ Name: n, Type: 'SecureString', Version: 1 })) }, AMZ_JSON);
    }
    if (service.startsWith('DynamoDB_') && options.dynamoEndpoint) {
      const made: AwsCall[] = [];
      if (operation === 'TransactWriteItems') {
        // IAM authorises each item of a transaction as its own action (PutItem, UpdateItem, DeleteItem, ConditionCheckItem).
        for (const item of (input.TransactItems ?? []) as Array<Record<string, { TableName: string }>>) {
          for (const [kind, op] of Object.entries(item)) made.push({ action: `dynamodb:${kind === 'ConditionCheck' ? 'ConditionCheckItem' : `${kind}Item`}`, resource: op.TableName });
        }
      } else {
        const tables = typeof input.TableName === 'string' ? [input.TableName] : Object.keys((input.RequestItems ?? {}) as object);
        for (const table of tables) made.push({ action: `dynamodb:${operation}`, resource: table });
      }
      if (denied(...made)) return refuse(res, `dynamodb:${operation}`, 'json');
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
      const answer = await fetch(options.dynamoEndpoint as string, { method: 'POST', headers, body: req.body });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/x-amz-json-1.0' }).end(await answer.text());
      return;
    }
    if (service === 'AmazonSQS' && (operation === 'SendMessageBatch' || operation === 'SendMessage')) {
      if (denied({ action: 'sqs:SendMessage', resource: String(input.QueueUrl) })) return refuse(res, 'sqs:SendMessage', 'json');
      const entries = operation === 'SendMessage' ? [{ Id: '', MessageBody: String(input.MessageBody) }] : (input.Entries as Array<{ Id: string; MessageBody: string }>);
      if (options.refuseSendsContaining && entries.some((e) => e.MessageBody.includes(options.refuseSendsContaining as string))) {
        return sendJson(res, 500, { __type: 'com.amazon.coral.service#InternalFailure', message: 'refused by the test' }, AMZ_JSON);
      }
      if (queue) for (const e of entries) queue.push({ id: `sent-${queue.length}-${e.Id}`, body: e.MessageBody, sentAt: Date.now() });
      if (operation === 'SendMessage') return sendJson(res, 200, { MessageId: 'm-1', MD5OfMessageBody: md5(String(input.MessageBody)) }, AMZ_JSON);
      return sendJson(res, 200, { Successful: entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: md5(e.MessageBody) })), Failed: [] }, AMZ_JSON);
    }
    if (service === 'AmazonSQS' && operation === 'ChangeMessageVisibility') {
      if (denied({ action: 'sqs:ChangeMessageVisibility', resource: String(input.QueueUrl) })) return refuse(res, 'sqs:ChangeMessageVisibility', 'json');
      visibility.push({ receiptHandle: String(input.ReceiptHandle), seconds: Number(input.VisibilityTimeout) });
      return sendJson(res, 200, {}, AMZ_JSON);
    }
    if (service === 'AmazonSSM' && operation === 'GetParameter') {
      const name = String(input.Name);
      if (denied({ action: 'ssm:GetParameter', resource: name })) return refuse(res, 'ssm:GetParameter', 'json');
      const value = options.parameters[name];
      if (value === undefined) return sendJson(res, 400, { __type: 'ParameterNotFound', message: `${name} not found` }, AMZ_JSON);
      return sendJson(res, 200, { Parameter: { Name: name, Type: 'SecureString', Value: value, Version: 1 } }, AMZ_JSON);
    }
    if (!service && (req.method === 'PUT' || req.method === 'GET')) {
      // S3, path style (the endpoint is an IP address): /<bucket>/<key>.
      const path = decodeURIComponent(req.url.split('?')[0] as string).slice(1);
      const action = req.method === 'PUT' ? 's3:PutObject' : 's3:GetObject';
      if (denied({ action, resource: path })) return refuse(res, action, 'xml');
      if (req.method === 'PUT') {
        objects.set(path, req.body);
        return void res.writeHead(200, { etag: `"${md5(req.body)}"` }).end();
      }
      const object = objects.get(path);
      if (object === undefined) return void res.writeHead(404, { 'content-type': 'application/xml' }).end('<Error><Code>NoSuchKey</Code></Error>');
      return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(object);
    }
    calls.push({ action: `unknown:${service}.${operation}`, resource: req.url });
    sendJson(res, 400, { __type: 'UnknownOperationException', message: `the recorder does not speak ${service}.${operation}` }, AMZ_JSON);
  });
  return { url: server.url, calls, visibility, close: () => server.close() };
}
