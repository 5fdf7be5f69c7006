/**
 * One local endpoint for the AWS services the functions call, recording each call as the
 * IAM action it needs and the resource it touches: DynamoDB requests are passed on to
 * dynalite, SQS sends are answered as SQS does (with the body's MD5), S3 objects are kept
 * in memory, SSM parameters come from a map. Point a bundle at it with
 * AWS_ENDPOINT_URL_{DYNAMODB,SQS,S3,SSM}.
 */
import { createHash } from 'node:crypto';
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

export async function startAwsRecorder(options: { dynamoEndpoint: string; parameters: Record<string, string>; refuseSendsContaining?: string }): Promise<AwsRecorder> {
  const calls: AwsCall[] = [];
  const visibility: AwsRecorder['visibility'] = [];
  const objects = new Map<string, string>();
  const server = await startLocalServer(async (req, res) => {
    const [service, operation] = String(req.headers['x-amz-target'] ?? '').split('.') as [string, string];
    const input = JSON.parse(req.body || '{}') as Record<string, unknown>;
    if (service.startsWith('DynamoDB_')) {
      const tables = typeof input.TableName === 'string' ? [input.TableName] : Object.keys((input.RequestItems ?? {}) as object);
      for (const table of tables) calls.push({ action: `dynamodb:${operation}`, resource: table });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
      const answer = await fetch(options.dynamoEndpoint, { method: 'POST', headers, body: req.body });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/x-amz-json-1.0' }).end(await answer.text());
      return;
    }
    if (service === 'AmazonSQS' && (operation === 'SendMessageBatch' || operation === 'SendMessage')) {
      calls.push({ action: 'sqs:SendMessage', resource: String(input.QueueUrl) });
      const entries = operation === 'SendMessage' ? [{ Id: '', MessageBody: String(input.MessageBody) }] : (input.Entries as Array<{ Id: string; MessageBody: string }>);
      if (options.refuseSendsContaining && entries.some((e) => e.MessageBody.includes(options.refuseSendsContaining as string))) {
        return sendJson(res, 500, { __type: 'com.amazon.coral.service#InternalFailure', message: 'refused by the test' }, AMZ_JSON);
      }
      if (operation === 'SendMessage') return sendJson(res, 200, { MessageId: 'm-1', MD5OfMessageBody: md5(String(input.MessageBody)) }, AMZ_JSON);
      return sendJson(res, 200, { Successful: entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: md5(e.MessageBody) })), Failed: [] }, AMZ_JSON);
    }
    if (service === 'AmazonSQS' && operation === 'ChangeMessageVisibility') {
      calls.push({ action: 'sqs:ChangeMessageVisibility', resource: String(input.QueueUrl) });
      visibility.push({ receiptHandle: String(input.ReceiptHandle), seconds: Number(input.VisibilityTimeout) });
      return sendJson(res, 200, {}, AMZ_JSON);
    }
    if (service === 'AmazonSSM' && operation === 'GetParameter') {
      const name = String(input.Name);
      calls.push({ action: 'ssm:GetParameter', resource: name });
      const value = options.parameters[name];
      if (value === undefined) return sendJson(res, 400, { __type: 'ParameterNotFound', message: `${name} not found` }, AMZ_JSON);
      return sendJson(res, 200, { Parameter: { Name: name, Type: 'SecureString', Value: value, Version: 1 } }, AMZ_JSON);
    }
    if (!service && (req.method === 'PUT' || req.method === 'GET')) {
      // S3, path style (the endpoint is an IP address): /<bucket>/<key>.
      const path = decodeURIComponent(req.url.split('?')[0] as string).slice(1);
      calls.push({ action: req.method === 'PUT' ? 's3:PutObject' : 's3:GetObject', resource: path });
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
