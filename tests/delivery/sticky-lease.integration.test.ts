/**
 * A burst of events on one pull request leaves ONE sticky comment (README "Code review
 * bot"): each delivery's find-then-create/edit holds the subject's lease, taken in a real
 * lease store shared by two "workers" (two SQLite connections to one data dir, as two
 * processes would have; two DynamoDB clients on dynalite, as two Lambda containers would),
 * against a local server speaking GitHub's REST API.
 */
import githubExamples from '@octokit/webhooks-examples';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { createDynamoClient } from '../../functions/aws/dynamo';
import type { Config } from '../../functions/core/config/types';
import { subjectLeaseId } from '../../functions/core/delivery/subject-lease';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { commentMarker, stickyMarker } from '../../functions/core/events/loop-guard';
import { silentLogger } from '../../functions/core/log';
import { systemClock, type LeaseStore } from '../../functions/core/ports';
import { SqliteLeaseStore } from '../../functions/local/sqlite/leases';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { tempStore, type TestStore } from '../support/local-store';

const HEAD = '3333333333333333333333333333333333333333';
const THREAD = '/repos/octo/widgets/issues/7';
const SUBJECT_KEY = 'github:octo/widgets#7';

function synchronize(): Record<string, unknown> {
  const p = JSON.parse(JSON.stringify(githubExamples.find((g) => g.name === 'pull_request')!.examples[0])) as Record<string, any>;
  p.action = 'synchronize';
  p.pull_request.head.sha = HEAD;
  p.pull_request.number = 7;
  p.repository.full_name = 'octo/widgets';
  return p;
}

function request(eventId: string, settings: Config['delivery']): DeliveryRequest {
  return {
    subscription: { name: 'review', events: [], skills: [], deliver: ['codehost_comment'], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message: { v: 1, event_id: eventId, subscription: 'review', source: 'github', event: 'pull_request', delivery_id: eventId, received_at: '' },
    payload: synchronize(), reply: `Review for ${eventId}.`, settings, logger: silentLogger,
  };
}

let host: FakeCodehost;
let sqlite: TestStore;
let dynamo: TestDynamo;
beforeAll(async () => {
  [host, dynamo] = await Promise.all([startFakeCodehost(), startDynalite()]);
  sqlite = tempStore();
});
afterAll(async () => {
  sqlite.close();
  await Promise.all([host.close(), dynamo.close()]);
});
beforeEach(() => {
  host.comments.clear();
  host.server.requests.length = 0;
});

/** `timeout_ms`: delivery.timeout; a sticky delivery waits up to 3 of them for the lease. */
const settings = (timeout_ms = 5_000): Config['delivery'] => ({ timeout_ms, codehost: { github: { token: 'ghp_LEASE_TEST', api_url: host.url } } });
const noSleep = async () => {};

/** Two workers' lease stores over one store. */
const stores: Array<[string, () => [LeaseStore, LeaseStore]]> = [
  ['SQLite (two connections to one data dir)', () => [new SqliteLeaseStore(sqlite.store, systemClock), new SqliteLeaseStore(sqlite.reopen(), systemClock)]],
  ['DynamoDB (two clients, as two Lambda containers)', () => [
    new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, systemClock),
    new DynamoLeaseStore(createDynamoClient({ endpoint: dynamo.endpoint }), dynamo.tables.dedup, systemClock),
  ]],
];

describe.each(stores)('sticky comments serialised through the %s lease store', (_name, makeLeases) => {
  test('8 events on one pull request at once, delivered by two workers: one sticky comment holding every event marker', async () => {
    const [first, second] = makeLeases();
    const workers = [first, second].map((leases) => createDeliveryTargets(settings(), noSleep, undefined, { leases }).codehost_comment);
    const ids = Array.from({ length: 8 }, (_, i) => `evt_burst_${i}`);
    const outcomes = await Promise.all(ids.map((id, i) => workers[i % 2]!.deliver(request(id, settings()))));
    expect(outcomes.map((o) => o.status)).toEqual(ids.map(() => 'delivered'));
    const comments = host.comments.get(THREAD) ?? [];
    expect(comments).toHaveLength(1);
    expect(host.server.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    // Each later event edited it, keeping the earlier markers: a retry of any of them finds it.
    for (const id of ids) expect(comments[0]!.body).toContain(commentMarker('review', id));
    expect(comments[0]!.body).toContain(stickyMarker('review'));
    // Released after each delivery: nobody holds it now.
    expect(await first.acquire(subjectLeaseId(SUBJECT_KEY), 'review', 'probe', 1_000)).toBe(true);
    await first.release(subjectLeaseId(SUBJECT_KEY), 'review', 'probe');
  });

  test('a lease still held by another delivery past the wait: retryable sticky_busy, nothing posted; a dead holder\'s expired lease is taken over', async () => {
    const [leases, other] = makeLeases();
    const worker = createDeliveryTargets(settings(100), noSleep, undefined, { leases }).codehost_comment;
    expect(await other.acquire(subjectLeaseId(SUBJECT_KEY), 'review', 'live-holder', 60_000)).toBe(true);
    const busy = await worker.deliver(request('evt_busy', settings(100)));
    expect(busy).toMatchObject({ status: 'failed', retryable: true, code: 'sticky_busy' });
    expect(host.server.requests).toHaveLength(0);
    // Another subscription's sticky comment on the same pull request is not held up.
    const otherSubscription = request('evt_other_sub', settings());
    otherSubscription.subscription = { ...otherSubscription.subscription, name: 'triage' };
    expect(await worker.deliver(otherSubscription)).toMatchObject({ status: 'delivered' });
    await other.release(subjectLeaseId(SUBJECT_KEY), 'review', 'live-holder');

    // A holder that died: its lease has run out (0 ms), the next delivery takes it at once.
    expect(await other.acquire(subjectLeaseId(SUBJECT_KEY), 'review', 'dead-holder', 0)).toBe(true);
    expect(await worker.deliver(request('evt_after_dead', settings()))).toMatchObject({ status: 'delivered' });
  });
});
