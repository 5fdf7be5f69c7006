/**
 * Hunt 3 on the command line (the built CLI as a child process; a real ingest on the local
 * SQLite store for the requests): filters compare number literals by their written text
 * (defect 1), event filters with an action the host never sends are refused or warned and
 * `webhook test` says when its event would not reach the subscription (3), filtered
 * requests listed by `webhook events` open with `webhook event` (6), and `--debounce`,
 * long and JSONPath-style filters get clear answers (7).
 */
import { buildCli, hkIn as hk, tempConfigDir } from '../support/cli';
import { ingestOnStore, type StoreIngest } from '../support/store-ingest';

beforeAll(() => buildCli(), 60_000);

const configDir = (): string => tempConfigDir('webhooks: { github: { secret: ${GH} }, gitlab: { secret: ${GL} } }', 'hookagent-hunt3-');

describe('event filters whose action the code host never sends (defect 3)', () => {
  const dir = configDir();

  test.each([
    ['gitlab:merge_request.opened', "Did you mean 'gitlab:merge_request.open'?"],
    ['pull_request.open', "Did you mean 'pull_request.opened'?"],
    ['issue.opened', "Did you mean 'issue.open'?"],
    ['push.created', "Use 'push'"],
  ])('subscribe --events %s → exit 1: %s', async (events, message) => {
    const result = await hk(dir, 'webhook', 'subscribe', 'never', '--events', events, '--agent', 'none', '--prompt', 'x');
    expect([result.code, result.stderr]).toEqual([1, expect.stringContaining(message)]);
    expect((await hk(dir, 'webhook', 'show', 'never')).code).toBe(1);
  });

  test('an update that adds such a filter is refused and leaves the stored events as they were', async () => {
    expect((await hk(dir, 'webhook', 'subscribe', 'mr', '--events', 'gitlab:merge_request.open', '--agent', 'none', '--prompt', 'MR {object_attributes.iid}')).code).toBe(0);
    const refused = await hk(dir, 'webhook', 'update', 'mr', '--events', 'gitlab:merge_request.opened');
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining("Did you mean 'gitlab:merge_request.open'?")]);
    expect(JSON.parse((await hk(dir, 'webhook', 'show', 'mr', '--json')).stdout)).toMatchObject({ events: ['gitlab:merge_request.open'] });
    // A matching sample says nothing about event filters.
    const test = await hk(dir, 'webhook', 'test', 'mr');
    expect([test.code, test.stdout]).toEqual([0, expect.stringMatching(/^MR \d+/)]);
    expect(test.stdout).not.toContain('Event filters');
  });

  test('an unknown action is a warning, and webhook test says the sample would NOT reach the subscription', async () => {
    const created = await hk(dir, 'webhook', 'subscribe', 'odd-action', '--events', 'pull_request.frobbed', '--agent', 'none', '--prompt', 'PR {number}');
    expect(created.code).toBe(0);
    expect(created.stderr).toContain("warning: 'pull_request.frobbed' may never match: GitHub sends pull_request actions");
    const test = await hk(dir, 'webhook', 'test', 'odd-action');
    expect(test.code).toBe(0);
    expect(test.stdout).toContain('Event filters (no match: this event would NOT reach the subscription; it would be answered 200 "Event not handled")');
    expect(test.stdout).toContain('event filters pull_request.frobbed do not match github:pull_request.');
    // --event names another event: said too.
    const other = await hk(dir, 'webhook', 'test', 'mr', '--event', 'push', '--payload', '{"ref":"main"}');
    expect(other.stdout).toContain('event filters gitlab:merge_request.open do not match github:push');
  });
});

describe('--debounce, long filters and JSONPath-style paths (defect 7)', () => {
  const dir = configDir();
  beforeAll(async () => {
    expect((await hk(dir, 'webhook', 'subscribe', 'deb', '--events', 'pull_request', '--debounce', '60s')).code).toBe(0);
  });

  test('1.5s is refused (whole seconds), 0s turns debounce off, -5s gets the range, not a usage error', async () => {
    const fraction = await hk(dir, 'webhook', 'update', 'deb', '--debounce', '1.5s');
    expect([fraction.code, fraction.stderr]).toEqual([1, expect.stringContaining('--debounce takes whole seconds, not "1.5s": write 1s or 2s')]);
    expect(JSON.parse((await hk(dir, 'webhook', 'show', 'deb', '--json')).stdout)).toMatchObject({ debounce: '60s' });
    const negative = await hk(dir, 'webhook', 'update', 'deb', '--debounce', '-5s');
    expect([negative.code, negative.stderr]).toEqual([1, expect.stringContaining('or 0 to turn it off, not "-5s"')]);
    expect((await hk(dir, 'webhook', 'update', 'deb', '--debounce', '0s')).code).toBe(0);
    expect(JSON.parse((await hk(dir, 'webhook', 'show', 'deb', '--json')).stdout)).toMatchObject({ debounce: null });
  });

  test('an over-long filter echoes a window of it with the caret inside, not a line of 1,000 spaces', async () => {
    const result = await hk(dir, 'webhook', 'update', 'deb', '--filter', `title == ${'a'.repeat(1_000)}`);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('longer than 1000 characters');
    const caret = result.stderr.split('\n').find((l) => /^\s*\^$/.test(l));
    expect(caret).toBeDefined();
    expect((caret ?? '').length).toBeLessThan(90);
  });

  test('$.action and a[0] are refused with the path to write', async () => {
    const jsonPath = await hk(dir, 'webhook', 'update', 'deb', '--filter', '$.action == opened');
    expect([jsonPath.code, jsonPath.stderr]).toEqual([1, expect.stringContaining("without '$': write action")]);
    const indexed = await hk(dir, 'webhook', 'update', 'deb', '--filter', 'alerts[0].labels.x == y');
    expect([indexed.code, indexed.stderr]).toEqual([1, expect.stringContaining('write alerts.0.labels.x')]);
  });
});

describe('with a running ingest on the same store', () => {
  const dir = configDir();
  let ingest: StoreIngest;
  beforeAll(async () => {
    ingest = await ingestOnStore(dir);
  });
  afterAll(() => ingest.close());

  const send = async (event: string, payload: Record<string, unknown>, delivery: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const answer = await ingest.send(event, payload, { delivery });
    return { status: answer.statusCode ?? 0, body: JSON.parse(answer.body ?? '{}') as Record<string, unknown> };
  };

  test('a number literal matches the payload string written the same way, and only that (defect 1)', async () => {
    expect((await hk(dir, 'webhook', 'subscribe', 'ver', '--events', 'push', '--filter', 'ref_version in [1.0, 2.0]', '--agent', 'none', '--prompt', 'v')).code).toBe(0);
    expect(await send('push', { ref_version: '1.0' }, 'v-1.0')).toMatchObject({ status: 202, body: { status: 'accepted', subscriptions: ['ver'] } });
    expect(await send('push', { ref_version: '1' }, 'v-1')).toMatchObject({ status: 200, body: { reason: 'Filtered out' } });
    expect(await send('push', { ref_version: 2 }, 'v-2')).toMatchObject({ status: 202 });
    const test = await hk(dir, 'webhook', 'test', 'ver', '--payload', '{"ref_version":"1.0"}', '--event', 'push');
    expect(test.stdout).toContain('pass  ref_version in [1.0, 2.0]   (ref_version is "1.0")');
  });

  test('webhook event opens the req_ id webhook events lists for a filtered request; replay says why it cannot (defect 6)', async () => {
    expect((await hk(dir, 'webhook', 'subscribe', 'drafts', '--events', 'pull_request', '--filter', 'pull_request.draft == true', '--agent', 'none', '--prompt', 'x')).code).toBe(0);
    expect(await send('pull_request', { action: 'opened', number: 3, pull_request: { draft: false } }, 'not-a-draft')).toMatchObject({ body: { reason: 'Filtered out' } });
    const listed = JSON.parse((await hk(dir, 'webhook', 'events', 'drafts', '--json')).stdout) as Array<{ status: string; request_id: string }>;
    const id = listed.find((e) => e.status === 'filtered')?.request_id ?? '';
    expect(id).toMatch(/^req_/);
    expect((await hk(dir, 'webhook', 'events', 'drafts')).stdout).toContain(id);

    const story = await hk(dir, 'webhook', 'event', id);
    expect(story.code).toBe(0);
    expect(story.stdout).toContain(`${id}: a request-log entry (filtered, HTTP 200)`);
    expect(story.stdout).toContain('POST /webhooks/github pull_request.opened, delivery not-a-draft');
    expect(story.stdout).toContain('drafts: no (filter "pull_request.draft == true" failed (pull_request.draft is false))');
    expect(JSON.parse((await hk(dir, 'webhook', 'event', id, '--json')).stdout)).toMatchObject({ request_id: id, outcome: 'filtered', delivery_id: 'not-a-draft' });

    const replay = await hk(dir, 'webhook', 'replay', id);
    expect([replay.code, replay.stderr]).toEqual([1, expect.stringContaining('is a request-log id, not an event: its payload filters turned that request away')]);
    const missing = await hk(dir, 'webhook', 'event', 'req_0000000000000nope');
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining("No request 'req_0000000000000nope' in the request log")]);
  });
});
