/**
 * The DynamoDB request log's listing of one subscription's filtered requests (hunt 11 D3).
 * With each entry, request-log.ts writes a copy per subscription whose payload filters
 * turned the request away (core/request-filtered.ts) in the partition
 * `filtered#<subscription>`, under the entry's sort key and TTL: one Query lists them by
 * subscription and time, whatever else the log holds.
 *
 * Entries written before those copies existed (an earlier hookagent, for up to 7 days after
 * the upgrade) have none. Entries written since carry `indexed`: while the oldest entry kept
 * lacks it, the entries before the first one with it are read oldest first, UNINDEXED_SCAN
 * at most, and a read cut short says so (`partial`). Once they have expired, the check costs
 * one single-item Query.
 */
import { QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { FilteredRequests } from '../core/ports';
import { filterRefusal } from '../core/request-filtered';
import type { RequestRecord } from '../core/types';

/** The partition key (`day`) of a subscription's copies. */
export const filteredPartition = (subscription: string): string => `filtered#${subscription}`;
/** Set on every entry written with its copies. */
export const INDEXED_ATTRIBUTE = 'indexed';
/** How many entries written before the copies existed one listing reads at most. */
export const UNINDEXED_SCAN = 5000;
const DAY_MS = 24 * 3600 * 1000;

/** Which entries to read: received between `oldest` and `newest` (epoch ms, inclusive); `now` tells what has expired. */
export interface FilteredWindow {
  oldest: number;
  newest: number;
  now: number;
}

interface Reading {
  client: DynamoDBClient;
  table: string;
}

/** A Query of one partition between the window's bounds (`at` is `<received_at>#<request_id>`). */
function queryOf(r: Reading, partition: string, w: FilteredWindow, forward: boolean, limit: number, start?: Record<string, AttributeValue>): QueryCommand {
  return new QueryCommand({
    TableName: r.table,
    KeyConditionExpression: '#day = :day AND #at BETWEEN :oldest AND :newest',
    ExpressionAttributeNames: { '#day': 'day', '#at': 'at' },
    ExpressionAttributeValues: { ':day': { S: partition }, ':oldest': { S: new Date(w.oldest).toISOString() }, ':newest': { S: `${new Date(w.newest).toISOString()}#\uffff` } },
    ScanIndexForward: forward, Limit: limit, ExclusiveStartKey: start,
  });
}

const expired = (item: Record<string, AttributeValue>, now: number): boolean => item.expires_at?.N !== undefined && Number(item.expires_at.N) * 1000 <= now;
const entryOf = (item: Record<string, AttributeValue>): RequestRecord => JSON.parse(item.record?.S ?? '{}') as RequestRecord;
const sortKey = (e: RequestRecord): string => `${e.received_at}#${e.request_id}`;

/** The subscription's copies, newest first. */
async function indexed(r: Reading, subscription: string, w: FilteredWindow, limit: number): Promise<RequestRecord[]> {
  const out: RequestRecord[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await r.client.send(queryOf(r, filteredPartition(subscription), w, false, limit, start));
    for (const item of page.Items ?? []) if (!expired(item, w.now) && out.length < limit) out.push(entryOf(item));
    start = page.LastEvaluatedKey;
  } while (start && out.length < limit);
  return out;
}

/** The subscription's filtered requests among the entries written before the copies: the oldest, up to the first entry with `indexed`. */
async function unindexed(r: Reading, subscription: string, w: FilteredWindow): Promise<{ entries: RequestRecord[]; complete: boolean }> {
  const entries: RequestRecord[] = [];
  let read = 0;
  const last = new Date(w.newest).toISOString().slice(0, 10);
  for (let day = w.oldest; new Date(day).toISOString().slice(0, 10) <= last; day += DAY_MS) {
    let start: Record<string, AttributeValue> | undefined;
    do {
      // One item first: where the oldest entry has `indexed` (7 days after an upgrade), that is all.
      const page = await r.client.send(queryOf(r, new Date(day).toISOString().slice(0, 10), w, true, read === 0 ? 1 : Math.min(1000, UNINDEXED_SCAN - read), start));
      for (const item of page.Items ?? []) {
        if (item[INDEXED_ATTRIBUTE]) return { entries, complete: true };
        read++;
        const entry = entryOf(item);
        if (!expired(item, w.now) && filterRefusal(entry, subscription)) entries.push(entry);
      }
      if (read >= UNINDEXED_SCAN) return { entries, complete: false };
      start = page.LastEvaluatedKey;
    } while (start);
  }
  return { entries, complete: true };
}

/** Newest first: the copies, and the filtered entries written before them. */
export async function listFilteredRequests(r: Reading, subscription: string, w: FilteredWindow, limit: number): Promise<FilteredRequests> {
  if (w.newest < w.oldest || limit <= 0) return { entries: [] };
  const [copies, older] = await Promise.all([indexed(r, subscription, w, limit), unindexed(r, subscription, w)]);
  const entries = [...copies, ...older.entries].sort((a, b) => (sortKey(a) < sortKey(b) ? 1 : -1)).slice(0, limit);
  if (older.complete) return { entries };
  return {
    entries,
    partial: `Requests received before this hookagent indexed filtered requests by subscription were searched among the oldest ${UNINDEXED_SCAN} entries of the request log only: some filtered ones may be missing until those entries expire (7 days after the upgrade).`,
  };
}
