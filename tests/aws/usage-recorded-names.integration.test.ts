/**
 * Hunt 10 (cliaws) D2: the names the DynamoDB event log holds records under, deleted
 * subscriptions' included, come from a scan of its index that moves one page per call (the
 * console carries it on with each refresh). A one-shot command (`webhook usage`) asks for
 * the complete answer: the scan read to its end, with no note. On dynalite, pages of 3.
 */
import { DynamoEventLog } from '../../functions/aws/event-log';
import type { EventRecord } from '../../functions/core/types';
import { recordedNames } from '../../cli/recorded-names';
import { startDynalite, type TestDynamo } from '../support/dynalite';

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite('prod');
  const records: EventRecord[] = [];
  for (const [n, name] of NAMES.entries()) {
    for (let i = 0; i < 3; i++) {
      const id = `evt_names_${n}_${i}`;
      const at = new Date(Date.UTC(2026, 10, 1, 10, n, i)).toISOString();
      records.push({
        event_id: id, subscription: name, status: 'delivered', source: 'custom', event: 'deploy', delivery_id: id, received_at: at, updated_at: at,
        message: { v: 1, event_id: id, subscription: name, source: 'custom', event: 'deploy', delivery_id: id, received_at: at, payload: {} },
      } as EventRecord);
    }
  }
  await new DynamoEventLog(dynamo.client, dynamo.tables.events).putAll(records);
}, 60_000);
afterAll(async () => dynamo.close());

const DEFINED = ['live-a', 'live-b'];
const NAMES = [...DEFINED, 'gone-1', 'gone-2', 'gone-3', 'gone-4', 'gone-5', 'gone-6'];
const events = () => new DynamoEventLog(dynamo.client, dynamo.tables.events, { namesScanItems: 3 });

test('complete: the scan is read to its end in one call, every deleted name found, no note', async () => {
  const answer = await recordedNames(events(), DEFINED, { complete: true });
  expect(answer.note).toBeUndefined();
  expect([...answer.names].sort()).toEqual([...NAMES].sort());
});

test('paged (the console): one page per call, with a note until the scan has read the whole index', async () => {
  const log = events();
  const first = await recordedNames(log, DEFINED);
  expect(first.note).toMatch(/^Events of deleted subscriptions may be missing: .*3 records read so far; it goes on with each refresh\)$/);
  expect(first.names.length).toBeLessThan(NAMES.length);
  let answer = first;
  for (let calls = 1; answer.note !== undefined && calls < 20; calls++) answer = await recordedNames(log, DEFINED);
  expect([...answer.names].sort()).toEqual([...NAMES].sort());
});
