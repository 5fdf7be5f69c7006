/** A local SQS for SendMessageBatch on 127.0.0.1: answers as SQS does (each entry's MD5), keeps every request. */
import { createHash } from 'node:crypto';
import { sendJson, startLocalServer, type LocalServer } from './local-http';

export function startLocalSqs(): Promise<LocalServer> {
  return startLocalServer((req, res) => {
    const input = JSON.parse(req.body) as { Entries: Array<{ Id: string; MessageBody: string }> };
    sendJson(res, 200, {
      Successful: input.Entries.map((e) => ({ Id: e.Id, MessageId: `m${e.Id}`, MD5OfMessageBody: createHash('md5').update(e.MessageBody).digest('hex') })),
      Failed: [],
    });
  });
}

/** Every message body sent to `sqs` so far, in order. */
export function sentBodies(sqs: LocalServer): string[] {
  return sqs.requests.flatMap((r) => (JSON.parse(r.body) as { Entries: Array<{ MessageBody: string }> }).Entries.map((e) => e.MessageBody));
}
