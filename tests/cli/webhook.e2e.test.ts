/**
 * The `hookagent webhook` commands run as child processes against a temporary config
 * dir and the local store: every command, error path and exit code.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createIngest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { apiGatewayHandler } from '../../functions/ingest/api-gateway';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import type { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import type { SqliteQueue } from '../../functions/local/sqlite/queue';
import { buildCli, hkIn, runCli, tempConfigDir } from '../support/cli';
import { apiEvent } from '../support/requests';

beforeAll(() => buildCli(), 60_000);

const configDir = (yaml = '') => tempConfigDir(yaml, 'hookagent-cli-');

const hk = hkIn;

describe('subscribe, list, show', () => {
  const dir = configDir('webhooks: { public_url: "https://hooks.example.com" }\ndelivery: { messenger: { provider: telegram, bot_token: ${TG}, chat_id: "-1" } }\n');

  test('an empty list is a friendly line; --json is []', async () => {
    const empty = await hk(dir, 'webhook', 'list');
    expect(empty).toMatchObject({ code: 0, stderr: '' });
    expect(empty.stdout).toContain('No subscriptions yet');
    expect(JSON.parse((await hk(dir, 'webhook', 'list', '--json')).stdout)).toEqual([]);
  });

  test('subscribe stores it and prints URLs, the secret once, placeholders and sender setup', async () => {
    const result = await hk(dir, 'webhook', 'subscribe', 'pr-review', '--events', 'pull_request.opened,issues', '--events', 'merge_request',
      '--prompt', 'Review {pull_request.title} by {sender.login}', '--skills', 'code-review', '--deliver', 'messenger,log', '--description', 'PR reviews');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('Placeholders: {pull_request.title}, {sender.login}');
    expect(result.stdout).toContain('https://hooks.example.com/webhooks/github');
    expect(result.stdout).toContain('https://hooks.example.com/webhooks/gitlab');
    expect(result.stdout).toContain('https://hooks.example.com/webhooks/custom/pr-review');
    expect(result.stdout).toContain('Content type: application/json');
    expect(result.stdout).toContain('Events to send: pull_request, issues, merge_request');
    const secret = /whsec_[A-Za-z0-9+/]{43}=/.exec(result.stdout)?.[0];
    expect(secret).toBeDefined();
    expect(Buffer.from(secret!.slice(6), 'base64')).toHaveLength(32);

    const listed = await hk(dir, 'webhook', 'list');
    expect(listed.stdout).toMatch(/NAME\s+STATE\s+EVENTS\s+DELIVER\s+SKILLS\s+CREATED/);
    expect(listed.stdout).toContain('pr-review\tactive'); // piped: tab-separated
    expect(listed.stdout).not.toContain(secret);
    const json = JSON.parse((await hk(dir, 'webhook', 'list', '--json')).stdout) as Array<Record<string, unknown>>;
    expect(json).toEqual([expect.objectContaining({
      name: 'pr-review', events: ['pull_request.opened', 'issues', 'merge_request'], skills: ['code-review'], deliver: ['messenger', 'log'],
      state: 'active', description: 'PR reviews', prompt: 'Review {pull_request.title} by {sender.login}',
    })]);
    expect(json[0]).not.toHaveProperty('secret');

    const shown = JSON.parse((await hk(dir, 'webhook', 'show', 'pr-review', '--json')).stdout) as Record<string, unknown>;
    expect(shown).not.toHaveProperty('secret');
    expect(shown).toHaveProperty('created_at');
    const withSecret = JSON.parse((await hk(dir, 'webhook', 'show', 'pr-review', '--json', '--show-secret')).stdout) as Record<string, unknown>;
    expect(withSecret.secret).toBe(secret);
    const text = await hk(dir, 'webhook', 'show', 'pr-review');
    expect(text.stdout).toContain('description:');
    expect(text.stdout).not.toContain(secret);
  });

  test('a name that exists → exit 1 with a hint to use update', async () => {
    await hk(dir, 'webhook', 'subscribe', 'twice');
    const again = await hk(dir, 'webhook', 'subscribe', 'twice');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/use '(npx )?hookagent --config-dir \S+ webhook update twice'/);
  });

  test('update changes only the options given and keeps the secret', async () => {
    await hk(dir, 'webhook', 'subscribe', 'upd', '--events', 'push', '--prompt', 'P {ref}', '--description', 'first');
    const before = JSON.parse((await hk(dir, 'webhook', 'show', 'upd', '--json', '--show-secret')).stdout) as Record<string, unknown>;
    const updated = await hk(dir, 'webhook', 'update', 'upd', '--description', 'second');
    expect(updated.code).toBe(0);
    const after = JSON.parse((await hk(dir, 'webhook', 'show', 'upd', '--json', '--show-secret')).stdout) as Record<string, unknown>;
    expect(after).toMatchObject({ description: 'second', events: ['push'], prompt: 'P {ref}', secret: before.secret, created_at: before.created_at });
    expect(after.updated_at).not.toBe(before.updated_at);
  });

  test.each([
    [['show', 'ghost']], [['update', 'ghost', '--description', 'x']], [['delete', 'ghost']], [['pause', 'ghost']], [['resume', 'ghost']],
    [['events', 'ghost']], [['test', 'ghost']],
  ])('unknown name: %p → exit 1, No subscription named', async (args) => {
    const result = await hk(dir, 'webhook', ...args);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("No subscription named 'ghost'");
  });

  test.each(['Bad', 'a.b', 'a/b', '../x', 'a\u0007b', '_lead', 'x'.repeat(64)])('invalid name %p → exit 1', async (name) => {
    const result = await hk(dir, 'webhook', 'subscribe', name);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid subscription name');
  });

  test('validation: unknown skill lists those available; unknown target; target without config; bad template', async () => {
    const skill = await hk(dir, 'webhook', 'subscribe', 'v1', '--skills', 'nope');
    expect([skill.code, skill.stderr]).toEqual([1, expect.stringContaining('available: alert-triage, code-review, issue-triage')]);
    const target = await hk(dir, 'webhook', 'subscribe', 'v2', '--deliver', 'email');
    expect([target.code, target.stderr]).toEqual([1, expect.stringContaining('known targets: codehost_comment, teamchat, messenger, log')]);
    const unconfigured = await hk(dir, 'webhook', 'subscribe', 'v3', '--deliver', 'teamchat');
    expect([unconfigured.code, unconfigured.stderr]).toEqual([1, expect.stringContaining('delivery.teamchat')]);
    const template = await hk(dir, 'webhook', 'subscribe', 'v4', '--prompt', 'Hello {name');
    expect([template.code, template.stderr]).toEqual([1, expect.stringContaining("unclosed '{'")]);
    const stray = await hk(dir, 'webhook', 'subscribe', 'v5', '--prompt', 'a } b');
    expect(stray.code).toBe(1);
    expect((await hk(dir, 'webhook', 'show', 'v1')).code).toBe(1);
  });

  test('codehost_comment refuses events with nothing to comment on', async () => {
    const gh = configDir('delivery: { codehost: { github: { token: ${GH_TOKEN} } } }');
    const refused = await hk(gh, 'webhook', 'subscribe', 'stars', '--events', 'star', '--deliver', 'codehost_comment');
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining('codehost_comment cannot answer star')]);
    expect((await hk(gh, 'webhook', 'subscribe', 'prs', '--events', 'pull_request', '--deliver', 'codehost_comment')).code).toBe(0);
  });

  test('an unknown event name is accepted with a warning (custom senders)', async () => {
    const result = await hk(dir, 'webhook', 'subscribe', 'deploys', '--events', 'deploy.finished');
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("warning: 'deploy.finished' is not a GitHub or GitLab event name");
  });

  test('delete removes it', async () => {
    await hk(dir, 'webhook', 'subscribe', 'gone');
    expect((await hk(dir, 'webhook', 'delete', 'gone')).code).toBe(0);
    expect((await hk(dir, 'webhook', 'show', 'gone')).code).toBe(1);
  });
});

describe('test', () => {
  const dir = configDir();
  beforeAll(async () => {
    await hk(dir, 'webhook', 'subscribe', 'alerts', '--prompt', 'Alert {alerts.0.labels.alertname} on {alerts.0.labels.instance}: {missing.path}');
  });

  test('renders against a payload file and lists unresolved placeholders', async () => {
    const file = join(dir, 'payload.json');
    writeFileSync(file, JSON.stringify({ alerts: [{ labels: { alertname: 'DiskRunningFull', instance: 'db1' } }] }));
    const result = await hk(dir, 'webhook', 'test', 'alerts', '--payload', file);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Alert DiskRunningFull on db1: {missing.path}');
    expect(result.stdout).toContain('Unresolved placeholders (left as written): {missing.path}');
  });

  test('inline JSON; invalid JSON and missing files → exit 1; --send with nothing listening → exit 1', async () => {
    expect((await hk(dir, 'webhook', 'test', 'alerts', '--payload', '{"alerts":[]}')).code).toBe(0);
    const bad = await hk(dir, 'webhook', 'test', 'alerts', '--payload', '{"alerts":');
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('not valid JSON')]);
    expect((await hk(dir, 'webhook', 'test', 'alerts', '--payload', '/no/such/file.json')).code).toBe(1);
    expect((await hk(dir, 'webhook', 'test', 'alerts', '--payload', '[1]')).code).toBe(1);
    const unreachable = await hk(dir, 'webhook', 'test', 'alerts', '--send', '--url', 'http://127.0.0.1:1');
    expect([unreachable.code, unreachable.stderr]).toEqual([1, expect.stringContaining('Nothing answers at http://127.0.0.1:1')]);
  });
});

describe('usage, help and configuration errors', () => {
  const dir = configDir();

  test.each([
    [['webhook']], [['webhook', 'subscribe']], [['webhook', 'list', '--bogus']], [['nothing']], [['webhook', 'events', 'x', '--limit', '0']],
  ])('%p → exit 2 with usage on stderr', async (args) => {
    const result = await hk(dir, ...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error:');
    expect(result.stdout).toBe('');
  });

  test.each(['subscribe', 'list', 'show', 'update', 'delete', 'pause', 'resume', 'test', 'events', 'replay'])('webhook %s --help shows options and an example', async (command) => {
    const result = await hk(dir, 'webhook', command, '--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('--config-dir');
    expect(result.stdout).toMatch(/Examples:/);
  });

  test('an invalid config.yaml → exit 1 naming the key path', async () => {
    const bad = configDir('webhooks:\n  max_paylod_size: 1MB\n');
    const result = await hk(bad, 'webhook', 'list');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("webhooks.max_paylod_size: unknown key; did you mean 'max_payload_size'?");
  });
});

test('two subscribe calls of the same name at once: exactly one succeeds', async () => {
  const dir = configDir();
  const results = await Promise.all([hk(dir, 'webhook', 'subscribe', 'race'), hk(dir, 'webhook', 'subscribe', 'race'), hk(dir, 'webhook', 'subscribe', 'race')]);
  expect(results.map((r) => r.code).sort()).toEqual([0, 1, 1]);
  for (const r of results.filter((x) => x.code === 1)) expect(r.stderr).toContain('already exists');
});

describe('with a running service holding the store (as serve does)', () => {
  const dir = configDir('webhooks: { github: { secret: ${GH} } }');
  let store: LocalRuntime;
  let queue: SqliteQueue;
  let handler: ReturnType<typeof apiGatewayHandler>;
  let events: SqliteEventLog;

  beforeAll(async () => {
    mkdirSync(join(dir, 'data'), { recursive: true });
    // serve's own runtime (it holds the serve lock); the CLI opens the same database beside it.
    store = await openLocalRuntime(join(dir, 'data'), { role: 'serve', clock: systemClock, visibilityTimeoutMs: 60_000 });
    queue = store.queue;
    events = store.events;
    const ingest = createIngest(store.ingestDeps({ webhooks: { github: { secret: ['gh'] }, max_payload_size: 1024 * 1024 } }, silentLogger));
    handler = apiGatewayHandler(async () => ingest, silentLogger);
  });
  afterAll(async () => store.close());

  const send = async (n: number) => {
    const { signHub } = await import('../../functions/core/auth/signatures');
    const body = JSON.stringify({ action: 'opened', number: n });
    return handler(apiEvent({ path: '/webhooks/github', body, headers: { 'x-github-event': 'pull_request', 'x-hub-signature-256': signHub(body, 'gh') } }));
  };

  test('a subscription created by the CLI is seen by ingest on the next request, without a restart', async () => {
    expect((await send(1)).statusCode).toBe(200);
    expect((await hk(dir, 'webhook', 'subscribe', 'live', '--events', 'pull_request')).code).toBe(0);
    const result = await send(2);
    expect(result.statusCode).toBe(202);
    expect(JSON.parse(result.body ?? '{}')).toMatchObject({ status: 'accepted', subscriptions: ['live'] });
  });

  test('pause holds events; resume releases them in arrival order; notes for no-ops', async () => {
    await hk(dir, 'webhook', 'subscribe', 'held', '--events', 'pull_request');
    await hk(dir, 'webhook', 'delete', 'live');
    expect((await hk(dir, 'webhook', 'pause', 'held')).code).toBe(0);
    const again = await hk(dir, 'webhook', 'pause', 'held');
    expect([again.code, again.stdout]).toEqual([0, expect.stringContaining('already paused')]);
    for (const n of [10, 11, 12]) expect(JSON.parse((await send(n)).body ?? '{}')).toMatchObject({ status: 'held' });
    const before = await queue.size();
    const resumed = await hk(dir, 'webhook', 'resume', 'held');
    expect([resumed.code, resumed.stdout]).toEqual([0, expect.stringContaining('released 3 held event(s)')]);
    const received = await queue.receive(10);
    const numbers = received.map((m) => (JSON.parse(m.body) as { payload: { number: number }; subscription: string }))
      .filter((m) => m.subscription === 'held').map((m) => m.payload.number);
    expect(numbers).toEqual([10, 11, 12]);
    expect(received.length).toBe(before + 3);
    for (const m of received) await queue.delete(m.receiptHandle);
    expect(await events.listByStatus('held', 'held')).toHaveLength(0);
    const active = await hk(dir, 'webhook', 'resume', 'held');
    expect([active.code, active.stdout]).toEqual([0, expect.stringContaining('already active')]);
  });

  test('resume --discard-held drops them', async () => {
    await hk(dir, 'webhook', 'pause', 'held');
    await send(20);
    const result = await hk(dir, 'webhook', 'resume', 'held', '--discard-held');
    expect(result.stdout).toContain('discarded 1 held event(s)');
    expect(await queue.receive(10)).toEqual([]);
  });

  test('events lists outcomes (table and --json); replay queues a new attempt not blocked by dedup', async () => {
    const accepted = JSON.parse((await send(30)).body ?? '{}') as { event_id: string };
    const table = await hk(dir, 'webhook', 'events', 'held', '--limit', '2');
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(accepted.event_id);
    const json = JSON.parse((await hk(dir, 'webhook', 'events', 'held', '--json')).stdout) as Array<{ event_id: string; status: string }>;
    expect(json[0]).toMatchObject({ event_id: accepted.event_id, status: 'queued' });
    for (const m of await queue.receive(10)) await queue.delete(m.receiptHandle);

    const replayed = await hk(dir, 'webhook', 'replay', accepted.event_id);
    expect(replayed.code).toBe(0);
    const [message] = await queue.receive(10);
    const body = JSON.parse(message!.body) as { event_id: string; replay_of: string };
    expect(body.replay_of).toBe(accepted.event_id);
    expect(body.event_id).not.toBe(accepted.event_id);
    expect((await events.get(body.event_id, 'held'))?.status).toBe('queued');
    const missing = await hk(dir, 'webhook', 'replay', 'evt_nope');
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining("No event 'evt_nope'")]);

    // Paused: the replay is held like any event arriving now, and says so; a held event itself is not replayed (resume delivers it).
    await hk(dir, 'webhook', 'pause', 'held');
    const whilePaused = await hk(dir, 'webhook', 'replay', accepted.event_id);
    expect([whilePaused.code, whilePaused.stdout]).toEqual([0, expect.stringMatching(/^Held evt_\S+ for 'held' \(a replay of evt_\S+\): 'held' is paused; '(npx )?hookagent --config-dir \S+ webhook resume held' releases it\.\n$/)]);
    expect(await queue.receive(10)).toEqual([]);
    const heldCopy = /^Held (evt_\S+) /.exec(whilePaused.stdout)![1]!;
    const again = await hk(dir, 'webhook', 'replay', heldCopy);
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining(`Event '${heldCopy}' is still held for 'held' (paused)`)]);
    await hk(dir, 'webhook', 'resume', 'held');
    expect((await queue.receive(10)).map((m) => JSON.parse(m.body).event_id)).toEqual([heldCopy]);
    const empty = await hk(dir, 'webhook', 'events', 'held', '--limit', '1', '--json');
    expect(JSON.parse(empty.stdout)).toHaveLength(1);
  });

  test('events shows what happened (reason, warnings, reply) and pages with --before', async () => {
    await hk(dir, 'webhook', 'subscribe', 'paged', '--events', 'pull_request');
    const base = Date.parse('2026-11-20T10:00:00Z');
    const records = Array.from({ length: 5 }, (_, i) => {
      const at = new Date(base + i * 1000).toISOString();
      const id = `evt_paged_${i}`;
      return {
        event_id: id, subscription: 'paged', status: i === 0 ? 'failed' as const : i === 1 ? 'suppressed' as const : 'delivered' as const,
        source: 'github' as const, event: 'pull_request', action: 'opened', delivery_id: `d${i}`, received_at: at, updated_at: at, attempts: 1,
        message: { v: 1 as const, event_id: id, subscription: 'paged', source: 'github' as const, event: 'pull_request', delivery_id: `d${i}`, received_at: at },
        ...(i === 0 ? { error: { code: 'agent_failed', message: 'the model answered 500' } } : {}),
        ...(i >= 2 ? { reply: `Looks good, change ${i}`, warnings: ['unresolved placeholder {pull_request.nope}'], targets: { log: { status: 'delivered' as const, at } } } : {}),
      };
    });
    await events.putAll(records);
    const first = await hk(dir, 'webhook', 'events', 'paged', '--limit', '2');
    expect(first.stdout).toContain('evt_paged_4');
    expect(first.stdout).toContain('evt_paged_3');
    expect(first.stdout).toContain('reply: "Looks good, change 4"');
    expect(first.stdout).toContain('1 warning(s): unresolved placeholder {pull_request.nope}');
    expect(first.stderr).toContain('webhook events paged --limit 2 --before evt_paged_3');
    const second = await hk(dir, 'webhook', 'events', 'paged', '--limit', '2', '--before', 'evt_paged_3');
    expect(second.stdout).not.toContain('evt_paged_3');
    expect(second.stdout).toContain('evt_paged_2');
    expect(second.stdout).toContain('evt_paged_1');
    expect(second.stdout).toContain('the agent answered [SILENT]');
    const third = await hk(dir, 'webhook', 'events', 'paged', '--limit', '2', '--before', 'evt_paged_1');
    expect(third.stdout).toContain('agent_failed: the model answered 500');
    const unknown = await hk(dir, 'webhook', 'events', 'paged', '--before', 'evt_nope');
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining("--before takes an event id")]);
  });
});
