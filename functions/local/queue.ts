/**
 * The local queue of `hookagent serve`, with SQS semantics and durable on disk: messages
 * live in a table of the local store, a received message stays invisible for the
 * visibility timeout and comes back if it is not deleted (so a crash or `kill -9` loses
 * nothing), each receive counts, and a message received more than `maxReceiveCount`
 * times moves to the dead-letter table. Any process (serve, the CLI) may send; the
 * consumer is woken at once by in-process sends and by a touch of the wake file.
 */
import {
  BatchWriteItemCommand, CreateTableCommand, DeleteItemCommand, DescribeTableCommand, PutItemCommand, QueryCommand, ScanCommand,
  UpdateItemCommand, type AttributeValue, type CreateTableCommandInput, type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { HookError } from '../core/errors';
import type { Clock, EventQueue, SendOptions } from '../core/ports';
import type { QueueMessage } from '../core/types';
import { isConditionalFailure, storeUnavailable } from '../aws/dynamo';

export interface LocalQueueOptions {
  table: string;
  deadLetterTable: string;
  visibilityTimeoutMs: number;
  maxReceiveCount: number;
  clock: Clock;
  /** Called after every send, so a consumer in another process can be woken. */
  onSend?: () => void;
}

export interface ReceivedMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  receiveCount: number;
  sentAt: number;
}

export interface DeadLetter {
  messageId: string;
  body: string;
  receiveCount: number;
  deadAt: number;
}

type Item = Record<string, AttributeValue>;

/** Index of the queue table ordered by the time each message becomes visible. */
const BY_VISIBILITY = 'by_visibility';
const pad = (n: number, width: number) => String(Math.max(0, Math.floor(n))).padStart(width, '0');
/** The index sort key: visible-at, then arrival, so equal times keep arrival order. */
const visibilityKey = (visibleAt: number, sentAt: string) => `${pad(visibleAt, 15)}#${sentAt}`;

function tableInput(table: string, indexed: boolean): CreateTableCommandInput {
  return {
    TableName: table, BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: 'id', AttributeType: 'S' },
      ...(indexed ? [{ AttributeName: 'q', AttributeType: 'S' as const }, { AttributeName: 'vkey', AttributeType: 'S' as const }] : []),
    ],
    KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    ...(indexed ? {
      GlobalSecondaryIndexes: [{
        IndexName: BY_VISIBILITY,
        KeySchema: [{ AttributeName: 'q', KeyType: 'HASH' as const }, { AttributeName: 'vkey', KeyType: 'RANGE' as const }],
        Projection: { ProjectionType: 'KEYS_ONLY' as const },
      }],
    } : {}),
  };
}

export class LocalQueue implements EventQueue {
  private readonly waiters = new Set<() => void>();
  private sequence = 0;

  constructor(private readonly client: DynamoDBClient, private readonly options: LocalQueueOptions) {}

  /** Creates the queue and dead-letter tables when they do not exist yet. */
  async ensureTables(): Promise<void> {
    for (const [table, indexed] of [[this.options.table, true], [this.options.deadLetterTable, false]] as const) {
      try {
        await this.client.send(new DescribeTableCommand({ TableName: table }));
      } catch (error) {
        if (!(error instanceof Error && error.name === 'ResourceNotFoundException')) throw storeUnavailable('The local queue', error);
        try {
          await this.client.send(new CreateTableCommand(tableInput(table, indexed)));
        } catch (createError) {
          // Another process created it in the meantime.
          if (!(createError instanceof Error && createError.name === 'ResourceInUseException')) throw storeUnavailable('The local queue', createError);
        }
      }
    }
  }

  async send(messages: QueueMessage[], options: SendOptions = {}): Promise<void> {
    await this.sendBodies(messages.map((m) => JSON.stringify(m)), options);
  }

  /** `delaySeconds` (at most 900, as SQS): the messages become visible that much later. */
  async sendBodies(bodies: string[], options: SendOptions = {}): Promise<void> {
    const now = this.options.clock.now();
    const visibleAt = now + Math.min(900, Math.max(0, options.delaySeconds ?? 0)) * 1000;
    const items: Item[] = bodies.map((body) => {
      // Arrival order within one millisecond, for FIFO-like receives.
      const sentAt = pad(now * 1000 + (this.sequence++ % 1000), 18);
      return {
        id: { S: randomUUID() }, body: { S: body }, visible_at: { N: String(visibleAt) }, receive_count: { N: '0' },
        sent_at: { S: sentAt }, q: { S: 'q' }, vkey: { S: visibilityKey(visibleAt, sentAt) },
      };
    });
    try {
      for (let i = 0; i < items.length; i += 25) {
        let pending = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
        for (let attempt = 0; pending.length > 0; attempt++) {
          if (attempt === 5) throw new Error('writes left unprocessed');
          const result = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.options.table]: pending } }));
          pending = (result.UnprocessedItems?.[this.options.table] ?? []) as typeof pending;
        }
      }
    } catch (error) {
      throw new HookError('unavailable', `The local queue is unavailable (${error instanceof Error ? error.name : 'Error'})`, { retryable: true, cause: error });
    }
    this.wake();
    this.options.onSend?.();
  }

  /**
   * Receives up to `max` visible messages, oldest first, making each invisible for the
   * visibility timeout. Messages already received `maxReceiveCount` times go to the
   * dead-letter table instead.
   */
  async receive(max: number): Promise<ReceivedMessage[]> {
    const now = this.options.clock.now();
    const received: ReceivedMessage[] = [];
    for (const item of await this.visibleItems(now, max * 2)) {
      if (received.length >= max) break;
      const count = Number(item.receive_count?.N ?? 0);
      if (count >= this.options.maxReceiveCount) {
        await this.moveToDeadLetters(item, now);
        continue;
      }
      const claimed = await this.claim(item, now);
      if (claimed) received.push(claimed);
    }
    return received;
  }

  /** Deletes a received message; a stale receipt (the message was received again since) is ignored. */
  async delete(receiptHandle: string): Promise<void> {
    const [id, visibleAt] = parseReceipt(receiptHandle);
    try {
      await this.client.send(new DeleteItemCommand({
        TableName: this.options.table, Key: { id: { S: id } },
        ConditionExpression: 'visible_at = :v', ExpressionAttributeValues: { ':v': { N: visibleAt } },
      }));
    } catch (error) {
      if (!isConditionalFailure(error)) throw storeUnavailable('The local queue', error);
    }
  }

  /** ChangeMessageVisibility: visible again after `delayMs` (0 = now). */
  async changeVisibility(receiptHandle: string, delayMs: number): Promise<void> {
    const [id, visibleAt, sentAt] = parseReceipt(receiptHandle);
    try {
      await this.client.send(new UpdateItemCommand({
        TableName: this.options.table, Key: { id: { S: id } },
        UpdateExpression: 'SET visible_at = :next, vkey = :vkey', ConditionExpression: 'visible_at = :v',
        ExpressionAttributeValues: {
          ':v': { N: visibleAt }, ':next': { N: String(this.options.clock.now() + delayMs) },
          ':vkey': { S: visibilityKey(this.options.clock.now() + delayMs, sentAt) },
        },
      }));
    } catch (error) {
      if (!isConditionalFailure(error)) throw storeUnavailable('The local queue', error);
    }
    this.wake();
  }

  /**
   * Makes every message visible now. Only for the store's single owner at start-up:
   * messages still invisible were in flight in a process that no longer exists.
   */
  async releaseAll(): Promise<number> {
    const now = this.options.clock.now();
    let released = 0;
    for (const item of await this.scan(this.options.table)) {
      if (Number(item.visible_at?.N) <= now) continue;
      try {
        await this.client.send(new UpdateItemCommand({
          TableName: this.options.table, Key: { id: item.id as AttributeValue },
          UpdateExpression: 'SET visible_at = :now, vkey = :vkey', ConditionExpression: 'visible_at = :seen',
          ExpressionAttributeValues: { ':now': { N: String(now) }, ':seen': item.visible_at as AttributeValue, ':vkey': { S: visibilityKey(now, item.sent_at?.S ?? '') } },
        }));
        released += 1;
      } catch (error) {
        if (!isConditionalFailure(error)) throw storeUnavailable('The local queue', error);
      }
    }
    return released;
  }

  /** Milliseconds until the next invisible message becomes visible; undefined when none is waiting. */
  async nextVisibleIn(): Promise<number | undefined> {
    const first = (await this.queryIndex(undefined, 1))[0];
    const visibleAt = Number(first?.vkey?.S?.split('#')[0]);
    return first === undefined ? undefined : Math.max(0, visibleAt - this.options.clock.now());
  }

  async size(): Promise<number> {
    try {
      let count = 0;
      let start: Item | undefined;
      do {
        const page = await this.client.send(new ScanCommand({ TableName: this.options.table, Select: 'COUNT', ...(start ? { ExclusiveStartKey: start } : {}) }));
        count += page.Count ?? 0;
        start = page.LastEvaluatedKey;
      } while (start);
      return count;
    } catch (error) {
      throw storeUnavailable('The local queue', error);
    }
  }

  async deadLetters(): Promise<DeadLetter[]> {
    return (await this.scan(this.options.deadLetterTable))
      .map((item) => ({
        messageId: item.id?.S ?? '', body: item.body?.S ?? '', receiveCount: Number(item.receive_count?.N ?? 0), deadAt: Number(item.dead_at?.N ?? 0),
      }))
      .sort((a, b) => a.deadAt - b.deadAt);
  }

  /** Sends a message straight to the dead-letter table (a permanent failure needs no retries). */
  async sendToDeadLetters(body: string, receiveCount: number): Promise<void> {
    const now = this.options.clock.now();
    await this.putDeadLetter({ id: { S: randomUUID() }, body: { S: body }, receive_count: { N: String(receiveCount) } }, now);
  }

  /** Resolves at the next in-process send or `wake()`. */
  waitForMessages(): Promise<void> {
    return new Promise((resolve) => this.waiters.add(resolve));
  }

  wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const resolve of waiters) resolve();
  }

  /** Visible messages, earliest first, read through the visibility index then consistently. */
  private async visibleItems(now: number, limit: number): Promise<Item[]> {
    const keys = await this.queryIndex(visibilityKey(now, '~'), limit);
    const items: Item[] = [];
    for (const key of keys) {
      const result = await this.client.send(new QueryCommand({
        TableName: this.options.table, KeyConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':id': key.id as AttributeValue }, ConsistentRead: true,
      })).catch((error: unknown) => {
        throw storeUnavailable('The local queue', error);
      });
      const item = result.Items?.[0];
      if (item && Number(item.visible_at?.N) <= now) items.push(item);
    }
    return items;
  }

  private async queryIndex(upTo: string | undefined, limit: number): Promise<Item[]> {
    try {
      const result = await this.client.send(new QueryCommand({
        TableName: this.options.table, IndexName: BY_VISIBILITY,
        KeyConditionExpression: upTo ? 'q = :q AND vkey <= :upTo' : 'q = :q',
        ExpressionAttributeValues: { ':q': { S: 'q' }, ...(upTo ? { ':upTo': { S: upTo } } : {}) },
        ScanIndexForward: true, Limit: limit,
      }));
      return result.Items ?? [];
    } catch (error) {
      throw storeUnavailable('The local queue', error);
    }
  }

  private async claim(item: Item, now: number): Promise<ReceivedMessage | undefined> {
    const id = item.id?.S ?? '';
    const sentAt = item.sent_at?.S ?? '';
    const next = now + this.options.visibilityTimeoutMs;
    try {
      const result = await this.client.send(new UpdateItemCommand({
        TableName: this.options.table, Key: { id: { S: id } },
        UpdateExpression: 'SET visible_at = :next, vkey = :vkey, receive_count = receive_count + :one',
        ConditionExpression: 'visible_at = :seen',
        ExpressionAttributeValues: {
          ':seen': item.visible_at as AttributeValue, ':next': { N: String(next) }, ':one': { N: '1' },
          ':vkey': { S: visibilityKey(next, sentAt) },
        },
        ReturnValues: 'ALL_NEW',
      }));
      const fresh = result.Attributes ?? {};
      return {
        messageId: id, receiptHandle: `${id}|${next}|${sentAt}`, body: fresh.body?.S ?? '',
        receiveCount: Number(fresh.receive_count?.N ?? 0), sentAt: Math.floor(Number(sentAt) / 1000),
      };
    } catch (error) {
      // Another consumer took it first.
      if (isConditionalFailure(error)) return undefined;
      throw storeUnavailable('The local queue', error);
    }
  }

  private async moveToDeadLetters(item: Item, now: number): Promise<void> {
    await this.putDeadLetter(item, now);
    try {
      await this.client.send(new DeleteItemCommand({
        TableName: this.options.table, Key: { id: item.id as AttributeValue },
        ConditionExpression: 'visible_at = :seen', ExpressionAttributeValues: { ':seen': item.visible_at as AttributeValue },
      }));
    } catch (error) {
      if (!isConditionalFailure(error)) throw storeUnavailable('The local queue', error);
    }
  }

  private async putDeadLetter(item: Item, now: number): Promise<void> {
    try {
      await this.client.send(new PutItemCommand({
        TableName: this.options.deadLetterTable,
        Item: { id: item.id as AttributeValue, body: item.body as AttributeValue, receive_count: item.receive_count as AttributeValue, dead_at: { N: String(now) } },
      }));
    } catch (error) {
      throw storeUnavailable('The local dead-letter queue', error);
    }
  }

  private async scan(table: string): Promise<Item[]> {
    const items: Item[] = [];
    let start: Item | undefined;
    try {
      do {
        const page = await this.client.send(new ScanCommand({ TableName: table, ConsistentRead: true, ...(start ? { ExclusiveStartKey: start } : {}) }));
        items.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start);
    } catch (error) {
      throw storeUnavailable('The local queue', error);
    }
    return items;
  }
}

/** Receipt handles are `id|visible_at|sent_at`: a receipt is stale once the message was received again. */
function parseReceipt(receiptHandle: string): [string, string, string] {
  const [id, visibleAt, sentAt, ...rest] = receiptHandle.split('|');
  if (!id || !visibleAt || sentAt === undefined || rest.length > 0) throw new HookError('receipt_invalid', 'Not a receipt handle of the local queue');
  return [id, visibleAt, sentAt];
}
