/**
 * RequestLog over the DynamoDB `requests` table (issue 17): one item per recorded
 * request, partitioned by UTC day (`day`), sorted by `at` = `<received_at>#<request_id>`,
 * kept 7 days by the TTL attribute `expires_at`. Listing reads the last eight days
 * newest first, filtering on endpoint and outcome. A request some subscriptions' payload
 * filters turned away is also copied once per such subscription (request-filtered.ts).
 */
import { PutItemCommand, QueryCommand, type AttributeValue, type DynamoDBClient, type WriteRequest } from '@aws-sdk/client-dynamodb';
import type { Clock, DeferredCommit, FilteredQuery, FilteredRequests, RequestLog, RequestQuery } from '../core/ports';
import { filteredSubscriptions } from '../core/request-filtered';
import type { RequestRecord } from '../core/types';
import { awsJsonBeside } from './aws-json';
import { committedClaimItem } from './dedup-store';
import { storeUnavailable } from './dynamo';
import { filteredPartition, INDEXED_ATTRIBUTE, listFilteredRequests } from './request-filtered';

export const REQUEST_RETENTION_SECONDS = 7 * 24 * 3600;
const DAY_MS = 24 * 3600 * 1000;
/** How far ahead of this reader an entry's stamp may be (another machine's clock) and still be listed without `until`. */
const CLOCK_MARGIN_MS = 5 * 60_000;

type Item = Record<string, AttributeValue>;

/** The entry's item (marked `indexed`: its copies are written with it), then a copy per subscription whose payload filters refused it. */
function requestItems(entry: RequestRecord): [Item, ...Item[]] {
  const at = Date.parse(entry.received_at);
  const item: Item = {
    day: { S: entry.received_at.slice(0, 10) },
    at: { S: `${entry.received_at}#${entry.request_id}` },
    endpoint: { S: entry.endpoint },
    outcome: { S: entry.outcome },
    record: { S: JSON.stringify(entry) },
    expires_at: { N: String(Math.floor(at / 1000) + REQUEST_RETENTION_SECONDS) },
  };
  return [{ ...item, [INDEXED_ATTRIBUTE]: { BOOL: true } }, ...filteredSubscriptions(entry).map((name) => ({ ...item, day: { S: filteredPartition(name) } }))];
}

export class DynamoRequestLog implements RequestLog {
  /** `dedupTable`: the dedup table, for `recordAndCommit` (without it, ingest commits delivery ids itself). */
  constructor(private readonly client: DynamoDBClient, private readonly table: string, private readonly clock: Clock, private readonly dedupTable?: string) {
    if (!dedupTable) this.recordAndCommit = undefined;
  }

  /** One PutItem; with copies (request-filtered.ts), a BatchWriteItem. */
  async record(entry: RequestRecord): Promise<void> {
    const [item, ...copies] = requestItems(entry);
    try {
      if (copies.length > 0) return await this.batchWrite([[this.table, item], ...copies.map((c): [string, Item] => [this.table, c])]);
      await this.client.send(new PutItemCommand({ TableName: this.table, Item: item }));
    } catch (error) {
      throw storeUnavailable('The request log', error);
    }
  }

  /**
   * The entry and the delivery id's committed claim in one BatchWriteItem (two tables,
   * plain puts, each 1 write unit; a transaction would cost two each), sent by the lean
   * client (aws-json.ts: one of ingest's three calls per event), with the entry's copies.
   */
  recordAndCommit? = async (entry: RequestRecord, commit: DeferredCommit): Promise<void> => {
    const [item, ...copies] = requestItems(entry);
    const claim = committedClaimItem(commit.key, commit.eventId, this.clock.now(), commit.ttlSeconds);
    try {
      await this.batchWrite([[this.table, item], [this.dedupTable as string, claim], ...copies.map((c): [string, Item] => [this.table, c])]);
    } catch (error) {
      throw storeUnavailable('The request log', error);
    }
  };

  /** Puts in BatchWriteItem calls of 25 (DynamoDB's most), in order; what DynamoDB leaves unprocessed is sent again, a few times. */
  private async batchWrite(puts: Array<[string, Item]>): Promise<void> {
    for (let from = 0; from < puts.length; from += 25) {
      let pending: Record<string, WriteRequest[]> = {};
      for (const [table, item] of puts.slice(from, from + 25)) (pending[table] ??= []).push({ PutRequest: { Item: item } });
      for (let attempt = 0; Object.keys(pending).length > 0; attempt++) {
        if (attempt === 4) throw new Error('writes left unprocessed after 4 attempts');
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
        const result = await awsJsonBeside(this.client, 'dynamodb').call<{ UnprocessedItems?: Record<string, WriteRequest[]> }>('BatchWriteItem', JSON.stringify({ RequestItems: pending }));
        pending = result.UnprocessedItems ?? {};
      }
    }
  }

  /** By subscription and time from the copies; entries written before them in a bounded read (request-filtered.ts). */
  async listFiltered(query: FilteredQuery): Promise<FilteredRequests> {
    const now = this.clock.now();
    // As list(): not clipped by this reader's clock, the Lambda that stamped an entry may run ahead of it.
    const window = { oldest: now - REQUEST_RETENTION_SECONDS * 1000, newest: query.until ?? now + CLOCK_MARGIN_MS, now };
    try {
      return await listFilteredRequests({ client: this.client, table: this.table }, query.subscription, window, query.limit);
    } catch (error) {
      throw storeUnavailable('The request log', error);
    }
  }

  async list(query: RequestQuery): Promise<RequestRecord[]> {
    const now = this.clock.now();
    const oldest = Math.max(query.since ?? 0, now - REQUEST_RETENTION_SECONDS * 1000);
    const out: RequestRecord[] = [];
    const filters: string[] = [];
    // Not clipped by this reader's clock: the Lambda that stamped an entry may run ahead of it.
    const newest = query.until ?? now + CLOCK_MARGIN_MS;
    // `at` is the ISO time, `#`, then the request id: every entry of the newest millisecond sorts below `#\uffff`.
    const values: Record<string, AttributeValue> = { ':oldest': { S: new Date(oldest).toISOString() }, ':newest': { S: `${new Date(newest).toISOString()}#\uffff` } };
    if (query.endpoint) {
      filters.push('endpoint = :endpoint');
      values[':endpoint'] = { S: query.endpoint };
    }
    if (query.outcome) {
      filters.push('outcome = :outcome');
      values[':outcome'] = { S: query.outcome };
    }
    try {
      if (newest < oldest) return out;
      for (let day = newest; day >= oldest - DAY_MS && out.length < query.limit; day -= DAY_MS) {
        let start: Record<string, AttributeValue> | undefined;
        do {
          const page = await this.client.send(new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: '#day = :day AND #at BETWEEN :oldest AND :newest',
            ExpressionAttributeNames: { '#day': 'day', '#at': 'at' },
            ExpressionAttributeValues: { ...values, ':day': { S: new Date(day).toISOString().slice(0, 10) } },
            ...(filters.length ? { FilterExpression: filters.join(' AND ') } : {}),
            ScanIndexForward: false,
            ExclusiveStartKey: start,
          }));
          for (const item of page.Items ?? []) {
            if (item.expires_at?.N && Number(item.expires_at.N) * 1000 <= now) continue;
            out.push(JSON.parse(item.record?.S ?? '{}') as RequestRecord);
            if (out.length >= query.limit) break;
          }
          start = page.LastEvaluatedKey;
        } while (start && out.length < query.limit);
      }
    } catch (error) {
      throw storeUnavailable('The request log', error);
    }
    return out;
  }
}
