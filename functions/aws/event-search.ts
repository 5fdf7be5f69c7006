/**
 * The console's search over the DynamoDB events table, which has no index over all
 * subscriptions by time: only `by_subscription` (subscription, arrival).
 * - One subscription's records: a Query of that index, newest first, the time bounds in
 *   the key condition, status and source in a FilterExpression, the text (any case) here;
 *   the summary attributes only (no prompt, reply or message item is read). `examine`
 *   bounds the records read (DynamoDB bills what it reads, filtered out or not).
 * - The names records are kept under, deleted subscriptions' too: nothing lists an index's
 *   partition keys, so a Scan of the index (the subscription attribute only) finds them, one
 *   page per call, resumed at the next call and done again every 10 minutes. Until one scan
 *   has read the whole index, the answer says names may be missing.
 */
import { QueryCommand, ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { EventSearch, EventSearchPage, ListedEvent, RecordedSubscriptions } from '../core/ports';
import { storeUnavailable } from './dynamo';
import { EVENTS_BY_SUBSCRIPTION_INDEX } from './tables';

type Item = Record<string, AttributeValue>;

/** What a list shows of a record: everything but its prompt, reply, transcript and message. */
const SUMMARY = ['event_id', 'subscription', 'status', 'source', 'event', 'action', 'delivery_id', 'received_at', 'updated_at',
  'warnings', 'targets', 'attempts', 'error', 'timings', 'superseded_by', 'usage', 'dead_lettered_at', 'model'];

const positionOf = (key: Item): { received_at: string; event_id: string } => {
  const arrival = key.arrival?.S ?? '';
  return { received_at: arrival.slice(0, arrival.indexOf('#')), event_id: key.event_id?.S ?? '' };
};

export async function searchSubscription(client: DynamoDBClient, table: string, subscription: string, search: EventSearch): Promise<EventSearchPage> {
  const names: Record<string, string> = {};
  SUMMARY.forEach((attribute, i) => (names[`#p${i}`] = attribute));
  const values: Item = { ':s': { S: subscription } };
  const before = search.before && `${search.before.received_at}#${search.before.event_id}`;
  if (before) values[':hi'] = { S: before };
  if (search.since) values[':lo'] = { S: search.since };
  // BETWEEN is inclusive: a record at an exclusive upper bound is read and skipped here.
  const range = before && search.since ? ' AND arrival BETWEEN :lo AND :hi'
    : before ? ` AND arrival ${search.before?.inclusive ? '<=' : '<'} :hi` : search.since ? ' AND arrival >= :lo' : '';
  const skip = before && search.since && !search.before?.inclusive ? before : undefined;
  const filters: string[] = [];
  if (search.status) {
    names['#fst'] = 'status';
    values[':status'] = { S: search.status };
    filters.push('#fst = :status');
  }
  if (search.source) {
    names['#fsrc'] = 'source';
    values[':source'] = { S: search.source };
    filters.push('#fsrc = :source');
  }
  const text = search.text?.toLowerCase();
  const filtered = filters.length > 0 || text !== undefined;
  const examine = Math.max(1, search.examine);
  const records: ListedEvent[] = [];
  let examined = 0;
  let start: Item | undefined;
  try {
    for (;;) {
      // Unfiltered, the next `limit` records are the answer; filtered, read more at a time.
      const want = filtered ? Math.max(100, 4 * search.limit) : search.limit - records.length;
      // The record at the exclusive bound is read on top: skipping it must not use up the page (no progress).
      const extra = skip && !start ? 1 : 0;
      const page = await client.send(new QueryCommand({
        TableName: table, IndexName: EVENTS_BY_SUBSCRIPTION_INDEX, ScanIndexForward: false,
        KeyConditionExpression: `subscription = :s${range}`, ProjectionExpression: Object.keys(names).filter((n) => n.startsWith('#p')).join(', '),
        ...(filters.length ? { FilterExpression: filters.join(' AND ') } : {}),
        ExpressionAttributeNames: names, ExpressionAttributeValues: values,
        Limit: Math.max(1, Math.min(examine - examined, want)) + extra, ...(start ? { ExclusiveStartKey: start } : {}),
      }));
      examined += Math.max(0, (page.ScannedCount ?? page.Items?.length ?? 0) - extra);
      const items = page.Items ?? [];
      for (const [i, item] of items.entries()) {
        const record = unmarshall(item) as ListedEvent;
        if (skip && `${record.received_at}#${record.event_id}` === skip) continue;
        if (text !== undefined && !record.event_id.toLowerCase().includes(text) && !record.delivery_id.toLowerCase().includes(text)) continue;
        records.push(record);
        if (records.length >= search.limit) {
          const more = i < items.length - 1 || page.LastEvaluatedKey !== undefined;
          return { records, examined, ...(more ? { last: { received_at: record.received_at, event_id: record.event_id } } : {}) };
        }
      }
      start = page.LastEvaluatedKey;
      if (!start) return { records, examined };
      if (examined >= examine) return { records, examined, last: positionOf(start) };
    }
  } catch (error) {
    throw storeUnavailable('The event log', error);
  }
}

/** How often the names are looked up again once a scan has read the whole index. */
const RESCAN_MS = 10 * 60_000;

export class RecordedNames {
  /** The names the last complete scan found. */
  private found = new Set<string>();
  private scan: { seen: Set<string>; read: number; start?: Item } | undefined;
  private completedAt: number | undefined;
  private advancing: Promise<void> | undefined;

  constructor(private readonly client: DynamoDBClient, private readonly table: string, private readonly pageItems = 1000, private readonly now = Date.now) {}

  async names(known: string[]): Promise<RecordedSubscriptions> {
    // Concurrent lists share one page of the scan.
    await (this.advancing ??= this.advance().finally(() => (this.advancing = undefined)));
    const names = [...new Set([...known, ...this.found, ...(this.scan?.seen ?? [])])];
    if (this.completedAt !== undefined) return { names };
    return {
      names,
      incomplete: `Events of deleted subscriptions may be missing: their names are still being looked up in the event log (a DynamoDB scan, ${this.scan?.read ?? 0} records read so far; it goes on with each refresh)`,
    };
  }

  private async advance(): Promise<void> {
    if (!this.scan) {
      if (this.completedAt !== undefined && this.now() - this.completedAt < RESCAN_MS) return;
      this.scan = { seen: new Set(), read: 0 };
    }
    const scan = this.scan;
    try {
      const page = await this.client.send(new ScanCommand({
        TableName: this.table, IndexName: EVENTS_BY_SUBSCRIPTION_INDEX, ProjectionExpression: '#s', ExpressionAttributeNames: { '#s': 'subscription' },
        Limit: this.pageItems, ...(scan.start ? { ExclusiveStartKey: scan.start } : {}),
      }));
      for (const item of page.Items ?? []) if (item.subscription?.S) scan.seen.add(item.subscription.S);
      scan.read += page.ScannedCount ?? page.Items?.length ?? 0;
      if (page.LastEvaluatedKey) {
        scan.start = page.LastEvaluatedKey;
        return;
      }
      this.found = scan.seen;
      this.completedAt = this.now();
      this.scan = undefined;
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
  }
}
