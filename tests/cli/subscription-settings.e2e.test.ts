/**
 * Issue 17 on the command line (the built CLI as a child process, the local store):
 * filters with their grammar errors, per-subscription settings in subscribe/update/show/
 * list, `webhook test` filter results, `webhook requests` and filtered events in `events`.
 */
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoRequestLog } from '../../functions/aws/request-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { MemoryDedupStore } from '../support/memory';
import { buildCli, hkIn, runCli, tempConfigDir } from '../support/cli';
import { ingestOnStore, type StoreIngest } from '../support/store-ingest';

beforeAll(() => buildCli(), 60_000);

const configDir = (yaml = 'webhooks: { github: { secret: ${GH} } }') => tempConfigDir(yaml, 'hookagent-cli17-');
const hk = hkIn;

describe('filters and settings in subscribe / update / show / list / test', () => {
  const dir = configDir();

  test.each([
    ['pull_request.draft = false', 20, 'expected an operator'],
    ['action in [opened, reopened', 28, "unclosed list: add ']'"],
    ['title =~ /(a/', 10, 'invalid regular expression'],
    ['title =~ /(a)\\1/', 10, 'no backreferences'],
    ['title =~ /x/g', 13, "unknown regex flag 'g'"],
    ['pull_request.additions > many', 26, '> compares numbers'],
    ['any(labels.name == bug)', 17, "expected '[*]'"],
    ['exists', 7, 'expected a payload path'],
    ['a == "open', 6, 'unclosed string'],
    ['a == 1 b', 8, 'after the end of the condition'],
  ])('--filter %p → exit 1 pointing at column %p', async (filter, column, message) => {
    const result = await hk(dir, 'webhook', 'subscribe', 'bad-filter', '--events', 'pull_request', '--filter', filter);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`at column ${column}: `);
    expect(result.stderr).toContain(message);
    // The caret sits under the column.
    const lines = result.stderr.split('\n');
    const caret = lines.find((l) => /^\s*\^$/.test(l));
    expect(caret?.indexOf('^')).toBe(column - 1 + 2);
    expect((await hk(dir, 'webhook', 'show', 'bad-filter')).code).toBe(1);
  });

  test('bad settings are refused with what to write', async () => {
    const cases: Array<[string[], string]> = [
      [['--agent', 'gpt'], "--agent takes 'none'"],
      [['--debounce', '20m'], '--debounce must be a duration'],
      [['--max-steps', '0'], '--max-steps must be a whole number from 1 to 50'],
      [['--timeout', 'soon'], '--timeout must be a duration'],
      [['--max-runs-per-hour', '-3'], '--max-runs-per-hour must be a whole number'],
      [['--model', 'has space'], '--model is a provider model id'],
      [['--events', 'github:'], 'Invalid event filter'],
    ];
    for (const [args, message] of cases) {
      const result = await hk(dir, 'webhook', 'subscribe', 'bad-setting', ...args);
      expect([result.code, result.stderr]).toEqual([1, expect.stringContaining(message)]);
    }
  });

  test('subscribe stores every setting; show and list display them; update changes and clears them', async () => {
    const created = await hk(dir, 'webhook', 'subscribe', 'triage', '--events', 'github:pull_request.opened,gitlab:merge_request.open,*',
      '--filter', 'pull_request.draft == false', '--filter', 'any(pull_request.labels[*].name in [bug, needs-review])',
      '--model', 'gpt-4o-mini', '--max-steps', '3', '--timeout', '45s', '--max-runs-per-hour', '20', '--debounce', '2m', '--agent', 'none');
    expect(created.code).toBe(0);
    const shown = JSON.parse((await hk(dir, 'webhook', 'show', 'triage', '--json')).stdout) as Record<string, unknown>;
    expect(shown).toMatchObject({
      events: ['github:pull_request.opened', 'gitlab:merge_request.open', '*'],
      filters: ['pull_request.draft == false', 'any(pull_request.labels[*].name in [bug, needs-review])'],
      agent: 'none', model: 'gpt-4o-mini', max_steps: 3, timeout_ms: 45_000, max_runs_per_hour: 20, debounce: '120s',
    });
    const text = (await hk(dir, 'webhook', 'show', 'triage')).stdout;
    for (const part of ['github:pull_request.opened, gitlab:merge_request.open, *', 'filter:', 'any(pull_request.labels[*].name in [bug, needs-review])', 'model:', 'gpt-4o-mini', 'debounce:', '120s']) expect(text).toContain(part);
    expect((await hk(dir, 'webhook', 'list')).stdout).toContain('github:pull_request.opened,gitlab:merge_request.open,*');

    expect((await hk(dir, 'webhook', 'update', 'triage', '--filter', '', '--agent', 'default', '--debounce', '0', '--model', '')).code).toBe(0);
    const updated = JSON.parse((await hk(dir, 'webhook', 'show', 'triage', '--json')).stdout) as Record<string, unknown>;
    // Cleared: §2.4's fields stay, empty; the other settings go.
    expect(updated).toMatchObject({ filters: [], agent: null, debounce: null });
    expect(updated).not.toHaveProperty('model');
    expect(updated).toMatchObject({ max_steps: 3, max_runs_per_hour: 20 });
  });

  test('show --json and list --json use the field names of DESIGN §2.4: filters, agent and debounce always, debounce as --debounce takes it', async () => {
    expect((await hk(dir, 'webhook', 'subscribe', 'names-plain', '--events', 'pull_request')).code).toBe(0);
    const plain = JSON.parse((await hk(dir, 'webhook', 'show', 'names-plain', '--json')).stdout) as Record<string, unknown>;
    // §2.4's fields, in its order, each present; unset ones are [] or null.
    const design = ['name', 'events', 'filters', 'agent', 'debounce', 'prompt', 'skills', 'deliver', 'description', 'state', 'created_at', 'updated_at'];
    expect(Object.keys(plain)).toEqual(design);
    expect(plain).toMatchObject({ filters: [], agent: null, debounce: null, prompt: null, description: null });

    expect((await hk(dir, 'webhook', 'update', 'names-plain', '--debounce', '90s', '--filter', 'action == opened', '--agent', 'none')).code).toBe(0);
    const set = JSON.parse((await hk(dir, 'webhook', 'show', 'names-plain', '--json')).stdout) as Record<string, unknown>;
    expect(set).toMatchObject({ filters: ['action == opened'], agent: 'none', debounce: '90s' });
    expect(set).not.toHaveProperty('debounce_seconds');
    const listed = (JSON.parse((await hk(dir, 'webhook', 'list', '--json')).stdout) as Array<Record<string, unknown>>).find((s) => s.name === 'names-plain');
    expect(listed).toEqual(set);
    // The value goes back into --debounce as it is.
    expect((await hk(dir, 'webhook', 'update', 'names-plain', '--debounce', String(set.debounce))).code).toBe(0);
    expect(JSON.parse((await hk(dir, 'webhook', 'show', 'names-plain', '--json')).stdout)).toMatchObject({ debounce: '90s' });
  });

  test('a subscription without events: list says custom endpoint only; subscribe points only at its custom URL', async () => {
    const created = await hk(dir, 'webhook', 'subscribe', 'alerts');
    expect(created.stdout).toContain('/webhooks/custom/alerts');
    expect(created.stdout).not.toContain('/webhooks/github');
    expect((await hk(dir, 'webhook', 'list')).stdout).toMatch(/alerts\s+active\s+\(custom endpoint only\)/);
  });

  test('webhook test --payload shows each filter\'s result', async () => {
    await hk(dir, 'webhook', 'subscribe', 'filtered', '--events', 'pull_request', '--prompt', 'PR {number}',
      '--filter', 'pull_request.draft == false', '--filter', 'number >= 10', '--filter', 'title =~ /^fix/i');
    const result = await hk(dir, 'webhook', 'test', 'filtered', '--payload', JSON.stringify({ number: 7, title: 'Fix it', pull_request: { draft: false } }));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('PR 7');
    expect(result.stdout).toContain('one fails');
    expect(result.stdout).toContain('pass  pull_request.draft == false   (pull_request.draft is false)');
    expect(result.stdout).toContain('FAIL  number >= 10   (number is 7)');
    expect(result.stdout).toContain('pass  title =~ /^fix/i');
    const two = await hk(dir, 'webhook', 'test', 'filtered', '--payload', JSON.stringify({ number: 7, title: 'Add it', pull_request: { draft: false } }));
    expect(two.stdout).toContain('Filters (2 fail: the event would be answered 200 "Filtered out")');
  });
});

describe('webhook requests and filtered events, with a running ingest holding the store', () => {
  const dir = configDir();
  let ingest: StoreIngest;
  beforeAll(async () => {
    ingest = await ingestOnStore(dir);
  });
  afterAll(() => ingest.close());
  const send = (event: string, payload: Record<string, unknown>, secret = 'gh', delivery = `d-${Math.random()}`) => ingest.send(event, payload, { secret, delivery });

  test('requests explains each request; --outcome, --endpoint, --limit, --json; events lists the filtered ones', async () => {
    expect((await hk(dir, 'webhook', 'subscribe', 'reviews', '--events', 'pull_request', '--filter', 'pull_request.draft == false')).code).toBe(0);
    expect((await send('pull_request', { action: 'opened', number: 1, pull_request: { draft: false } }, 'gh', 'ok-1')).statusCode).toBe(202);
    expect(JSON.parse((await send('pull_request', { action: 'opened', number: 2, pull_request: { draft: true } }, 'gh', 'draft-2')).body ?? '{}')).toMatchObject({ reason: 'Filtered out' });
    expect((await send('push', { ref: 'x' }, 'gh', 'push-3')).statusCode).toBe(200);
    expect((await send('push', { ref: 'x' }, 'forged', 'bad-4')).statusCode).toBe(401);

    const table = await hk(dir, 'webhook', 'requests');
    expect(table.code).toBe(0);
    for (const part of ['accepted', 'filtered', 'not_handled', 'rejected_signature', 'Webhook signature invalid', 'filter "pull_request.draft == false" failed', 'event filters pull_request do not match github:push']) {
      expect(table.stdout).toContain(part);
    }
    const json = JSON.parse((await hk(dir, 'webhook', 'requests', '--json', '--outcome', 'filtered')).stdout) as Array<Record<string, unknown>>;
    expect(json).toHaveLength(1);
    expect(json[0]).toMatchObject({ outcome: 'filtered', endpoint: 'github', delivery_id: 'draft-2', status: 200 });
    expect(JSON.parse((await hk(dir, 'webhook', 'requests', '--json', '--limit', '2')).stdout)).toHaveLength(2);
    expect(JSON.parse((await hk(dir, 'webhook', 'requests', '--json', '--endpoint', 'gitlab')).stdout)).toEqual([]);
    expect((await hk(dir, 'webhook', 'requests', '--outcome', 'bogus')).code).toBe(2);
    expect((await hk(dir, 'webhook', 'requests', '--endpoint', 'custom/../x')).code).toBe(2);

    const events = JSON.parse((await hk(dir, 'webhook', 'events', 'reviews', '--json')).stdout) as Array<Record<string, unknown>>;
    expect(events.map((e) => e.status)).toEqual(['filtered', 'queued']);
    expect(events[0]).toMatchObject({ delivery_id: 'draft-2', reason: expect.stringContaining('pull_request.draft is true') });
    expect((await hk(dir, 'webhook', 'events', 'reviews')).stdout).toContain('filtered');
    const onlyFiltered = await hk(dir, 'webhook', 'events', 'reviews', '--status', 'filtered', '--json');
    expect(JSON.parse(onlyFiltered.stdout).map((e: { status: string; delivery_id: string }) => [e.status, e.delivery_id])).toEqual([['filtered', 'draft-2']]);
  });

  test('requests: WHY is never cut when piped and names the subscriptions the event reached first; custom/? can be selected', async () => {
    for (const name of ['alpha-subscription', 'bravo-subscription', 'charlie-subscription']) await hk(dir, 'webhook', 'subscribe', name, '--events', 'push');
    await hk(dir, 'webhook', 'subscribe', 'zulu-review', '--events', 'pull_request', '--filter', 'number > 100');
    await send('pull_request', { action: 'opened', number: 5, pull_request: { draft: true } }, 'gh', 'why-5');
    const piped = await hk(dir, 'webhook', 'requests', '--outcome', 'filtered', '--limit', '1');
    const why = piped.stdout.trim().split('\n')[1]!.split('\t')[6]!;
    expect(why).toMatch(/^(reviews|zulu-review): no \(filter /);
    expect(why).toContain('zulu-review: no (filter "number > 100" failed');
    expect(why).toContain('charlie-subscription: no (event filters push do not match github:pull_request.opened)');
    expect(why.length).toBeGreaterThan(160);
    expect((await hk(dir, 'webhook', 'requests', '--endpoint', 'custom/?', '--json')).code).toBe(0);
  });

  test('events of a deleted subscription are still listed (its event log stays 14 days)', async () => {
    await hk(dir, 'webhook', 'subscribe', 'gone', '--events', 'pull_request');
    await send('pull_request', { action: 'opened', number: 6, pull_request: { draft: false } }, 'gh', 'gone-6');
    expect((await hk(dir, 'webhook', 'delete', 'gone')).code).toBe(0);
    const listed = await hk(dir, 'webhook', 'events', 'gone', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ delivery_id: 'gone-6' })]);
    expect(listed.stderr).toContain("'gone' was deleted; its events stay in the event log for 14 days");
    expect((await hk(dir, 'webhook', 'events', 'never-was')).code).toBe(1);
  });
});
