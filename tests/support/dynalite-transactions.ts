/**
 * TransactWriteItems for dynalite, which (4.0) does not implement it. Each transaction
 * runs alone: requests that arrive meanwhile wait, and it waits for those in flight. Its
 * items are applied one after the other by dynalite's own PutItem, UpdateItem and
 * DeleteItem with their conditions, after reading each item's current value; when one is
 * refused (its condition fails, or dynalite rejects it), the items already applied are put
 * back as they were and the answer is DynamoDB's TransactionCanceledException with a
 * reason per item (`ConditionalCheckFailed` for the refused one, `None` for the others,
 * including those not reached). So the conditions are evaluated by dynalite itself, and
 * the whole is all or nothing to every client. A ClientRequestToken seen before answers
 * success without applying anything again, as DynamoDB does within 10 minutes.
 */
import {
  DeleteItemCommand, DescribeTableCommand, GetItemCommand, PutItemCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { createDynamoClient } from '../../functions/aws/dynamo';

const STEP_HEADER = 'x-test-transaction-step';
type Item = Record<string, AttributeValue>;

interface TransactItem {
  Put?: { TableName: string; Item: Item; ConditionExpression?: string; ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Item };
  Update?: { TableName: string; Key: Item; UpdateExpression: string; ConditionExpression?: string; ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Item };
  Delete?: { TableName: string; Key: Item; ConditionExpression?: string; ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Item };
  ConditionCheck?: { TableName: string; Key: Item; ConditionExpression: string; ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Item };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Adds TransactWriteItems to a dynalite server listening at `endpoint`. */
export function addTransactions(server: Server, endpoint: string): { close(): void } {
  const handler = server.listeners('request')[0] as RequestListener;
  server.removeAllListeners('request');
  const client: DynamoDBClient = createDynamoClient({ endpoint });
  client.middlewareStack.add((next) => (args) => {
    (args.request as { headers: Record<string, string> }).headers[STEP_HEADER] = '1';
    return next(args);
  }, { step: 'build', name: 'transactionStepHeader' });
  const keySchemas = new Map<string, string[]>();
  const tokens = new Set<string>();
  let inFlight = 0;
  let drained: (() => void) | undefined;
  let exclusive: Promise<void> = Promise.resolve();
  let running = false;

  const keyOf = async (table: string, item: Item): Promise<Item> => {
    let names = keySchemas.get(table);
    if (!names) {
      const described = await client.send(new DescribeTableCommand({ TableName: table }));
      names = (described.Table?.KeySchema ?? []).map((k) => k.AttributeName as string);
      keySchemas.set(table, names);
    }
    return Object.fromEntries(names.map((n) => [n, item[n] as AttributeValue]));
  };

  const condition = (op: { ConditionExpression?: string; ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Item }) => ({
    ...(op.ConditionExpression ? { ConditionExpression: op.ConditionExpression } : {}),
    ...(op.ExpressionAttributeNames ? { ExpressionAttributeNames: op.ExpressionAttributeNames } : {}),
    ...(op.ExpressionAttributeValues ? { ExpressionAttributeValues: op.ExpressionAttributeValues } : {}),
  });

  const restore = async (table: string, key: Item, before: Item | undefined) => {
    if (before) await client.send(new PutItemCommand({ TableName: table, Item: before }));
    else await client.send(new DeleteItemCommand({ TableName: table, Key: key }));
  };

  async function transact(input: { TransactItems: TransactItem[]; ClientRequestToken?: string }, res: ServerResponse): Promise<void> {
    if (input.ClientRequestToken && tokens.has(input.ClientRequestToken)) return send(res, 200, {});
    const items = input.TransactItems ?? [];
    const targets = await Promise.all(items.map(async (op) => {
      const table = (op.Put ?? op.Update ?? op.Delete ?? op.ConditionCheck)?.TableName as string;
      const key = op.Put ? await keyOf(table, op.Put.Item) : ((op.Update ?? op.Delete ?? op.ConditionCheck)?.Key as Item);
      return { table, key, id: `${table}\u0000${JSON.stringify(key)}` };
    }));
    if (new Set(targets.map((t) => t.id)).size !== targets.length) {
      return send(res, 400, { __type: 'com.amazon.coral.validate#ValidationException', message: 'Transaction request cannot include multiple operations on one item' });
    }
    const applied: Array<{ table: string; key: Item; before: Item | undefined }> = [];
    for (let i = 0; i < items.length; i++) {
      const op = items[i] as TransactItem;
      const { table, key } = targets[i] as { table: string; key: Item };
      const before = (await client.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
      try {
        if (op.Put) await client.send(new PutItemCommand({ TableName: table, Item: op.Put.Item, ...condition(op.Put) }));
        else if (op.Update) await client.send(new UpdateItemCommand({ TableName: table, Key: key, UpdateExpression: op.Update.UpdateExpression, ...condition(op.Update) }));
        else if (op.Delete) await client.send(new DeleteItemCommand({ TableName: table, Key: key, ...condition(op.Delete) }));
        else if (op.ConditionCheck) {
          // The condition evaluated by a write that leaves the item as it was.
          await client.send(new PutItemCommand({ TableName: table, Item: before ?? key, ...condition(op.ConditionCheck) }));
          if (!before) await client.send(new DeleteItemCommand({ TableName: table, Key: key }));
        }
        applied.push({ table, key, before });
      } catch (error) {
        for (const done of applied.reverse()) await restore(done.table, done.key, done.before);
        const failed = error instanceof Error && error.name === 'ConditionalCheckFailedException';
        if (!failed) {
          const message = error instanceof Error ? error.message : String(error);
          return send(res, 400, { __type: 'com.amazon.coral.validate#ValidationException', message });
        }
        const reasons = items.map((_, j) => (j === i ? { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' } : { Code: 'None' }));
        return send(res, 400, {
          __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
          Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
          CancellationReasons: reasons,
        });
      }
    }
    if (input.ClientRequestToken) tokens.add(input.ClientRequestToken);
    send(res, 200, {});
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers[STEP_HEADER]) return handler(req, res);
    const isTransaction = req.headers['x-amz-target'] === 'DynamoDB_20120810.TransactWriteItems';
    const run = async () => {
      if (isTransaction) {
        // Alone: after the transactions before it, once the requests in flight are answered.
        const previous = exclusive;
        let done!: () => void;
        exclusive = new Promise<void>((resolve) => (done = resolve));
        await previous;
        running = true;
        if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
        try {
          await transact(JSON.parse(await readBody(req)) as { TransactItems: TransactItem[] }, res);
        } catch (error) {
          send(res, 500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: String(error) });
        } finally {
          running = false;
          done();
        }
        return;
      }
      while (running) await exclusive;
      inFlight += 1;
      res.on('close', () => {
        inFlight -= 1;
        if (inFlight === 0 && drained) {
          const wake = drained;
          drained = undefined;
          wake();
        }
      });
      handler(req, res);
    };
    void run();
  });
  return { close: () => client.destroy() };
}
