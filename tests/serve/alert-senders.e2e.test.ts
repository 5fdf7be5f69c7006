/**
 * Alert senders through `hookagent serve` and the built CLI (hunt 10):
 * PagerDuty v3 event types with three parts (`incident.responder.added`) are events a filter can
 * name whole; `webhook test` / `--send` for `incident.<verb>` use that event's sample; and with
 * `--debounce`, an alert group is the Alertmanager's (or Grafana's) that formed it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, runCli } from '../support/cli';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

const env = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'alerts', name), 'utf8')) as Record<string, unknown>;
const PAGERDUTY = fixture('pagerduty_v3.json') as { event: Record<string, unknown> };
const ALERTMANAGER = fixture('alertmanager.json');
const pagerduty = (eventType: string) => JSON.stringify({ event: { ...PAGERDUTY.event, event_type: eventType } });

let serve: Serve;
let dir: string;

beforeAll(async () => {
  buildCli();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-alert-senders-'));
  writeFileSync(join(dir, 'config.yaml'), 'webhooks: {}\n');
  serve = await startServe(dir, env);
}, 90_000);
afterAll(async () => {
  if (serve) await stopServe(serve);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli(['--config-dir', dir, 'webhook', ...args], env);

async function subscribe(name: string, ...args: string[]): Promise<string> {
  const result = await cli('subscribe', name, ...args);
  expect([result.code, result.stderr]).toEqual([0, '']);
  return /whsec_\S+/.exec(result.stdout)![0];
}

async function post(name: string, secret: string, body: string) {
  const response = await fetch(`${serve.url}/webhooks/custom/${name}`, { method: 'POST', body, headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

type LoggedEvent = { event_id: string; status: string; reply?: string | null };

/** The subscription's events once `count` of them are final (delivered, superseded or failed). */
async function finalEvents(name: string, count: number): Promise<Record<string, LoggedEvent>> {
  let events: LoggedEvent[] = [];
  await eventually(async () => {
    events = JSON.parse((await cli('events', name, '--json')).stdout) as LoggedEvent[];
    return events.length === count && events.every((e) => ['delivered', 'superseded', 'failed'].includes(e.status));
  }, `${count} final events of ${name}`);
  return Object.fromEntries(events.map((e) => [e.event_id, e]));
}

describe('PagerDuty event types with three parts', () => {
  test('reach a subscription naming them whole; another verb of the family does not, and the request log says so', async () => {
    const responder = await subscribe('pd-responder', '--events', 'incident.responder.added', '--agent', 'none', '--prompt', '{event.event_type}');
    const workflow = await subscribe('pd-workflow', '--events', 'incident.workflow.completed', '--agent', 'none', '--prompt', '{event.event_type}');
    expect(await post('pd-responder', responder, pagerduty('incident.responder.added'))).toMatchObject({ status: 202, body: { status: 'accepted', subscriptions: ['pd-responder'] } });
    expect(await post('pd-workflow', workflow, pagerduty('incident.workflow.completed'))).toMatchObject({ status: 202, body: { status: 'accepted', subscriptions: ['pd-workflow'] } });
    const started = await post('pd-workflow', workflow, pagerduty('incident.workflow.started'));
    expect(started).toMatchObject({ status: 200, body: { status: 'ignored', reason: 'Event not handled' } });
    await eventually(async () => {
      const log = JSON.parse((await cli('requests', '--endpoint', 'custom/pd-workflow', '--json')).stdout) as Array<{ candidates?: Array<{ reason: string }> }>;
      const reasons = log.flatMap((r) => r.candidates ?? []).map((c) => c.reason);
      return reasons.includes('event filters incident.workflow.completed do not match custom:incident.workflow.started')
        && reasons.includes('event filter incident.workflow.completed matches custom:incident.workflow.completed');
    }, 'the request log naming incident.workflow.started whole');
  }, 60_000);

  test('webhook test --payload judges them as serve does', async () => {
    await subscribe('pd-workflow-test', '--events', 'incident.workflow.completed', '--agent', 'none', '--prompt', 'PD {event.event_type}');
    const completed = await cli('test', 'pd-workflow-test', '--payload', pagerduty('incident.workflow.completed'));
    expect(completed.code).toBe(0);
    expect(completed.stdout).toContain('PD incident.workflow.completed');
    expect(completed.stdout).not.toContain('would NOT reach the subscription');
    const started = await cli('test', 'pd-workflow-test', '--payload', pagerduty('incident.workflow.started'));
    expect(started.stdout).toContain('would NOT reach the subscription');
    expect(started.stdout).toContain('event filters incident.workflow.completed do not match custom:incident.workflow.started');
  }, 60_000);
});

test('webhook test and test --send for `--events incident.triggered` use a PagerDuty incident.triggered sample, which the subscription takes', async () => {
  await subscribe('pd-triggered', '--events', 'incident.triggered', '--agent', 'none', '--prompt', 'PD {event.event_type}: {event.data.title}');
  const preview = await cli('test', 'pd-triggered');
  expect(preview.code).toBe(0);
  expect(preview.stdout).toContain('PD incident.triggered: A little bump in the road');
  expect(preview.stdout).not.toContain('would NOT reach the subscription');
  const sent = await cli('test', 'pd-triggered', '--send', '--wait', '10');
  expect(sent.code).toBe(0);
  expect(sent.stdout).not.toContain('Event not handled');
  expect(sent.stdout).toMatch(/→ 202/);
}, 60_000);

test('test --send and --event keep every part of a dotted type: incident.responder.added, a custom deploy.finished.ok', async () => {
  await subscribe('pd-responder-send', '--events', 'incident.responder.added', '--agent', 'none', '--prompt', 'PD {event.event_type}');
  const sent = await cli('test', 'pd-responder-send', '--send', '--wait', '10');
  expect([sent.code, sent.stdout]).toEqual([0, expect.stringMatching(/→ 202/)]);
  expect(sent.stdout).not.toContain('Event not handled');
  await subscribe('deploy-ok', '--events', 'custom:deploy.finished.ok', '--agent', 'none', '--prompt', 'deploy {event.action}');
  const custom = await cli('test', 'deploy-ok', '--send', '--wait', '10');
  expect([custom.code, custom.stdout]).toEqual([0, expect.stringMatching(/→ 202/)]);
  expect(custom.stdout).not.toContain('Event not handled');
  const preview = await cli('test', 'pd-responder-send', '--event', 'incident.workflow.completed', '--payload', pagerduty('incident.workflow.completed'));
  expect(preview.stdout).toContain('event filters incident.responder.added do not match custom:incident.workflow.completed');
}, 60_000);

describe('--debounce over alert groups', () => {
  const alertmanager = (externalURL: string, instance: string) => JSON.stringify({
    ...ALERTMANAGER, externalURL,
    alerts: (ALERTMANAGER.alerts as Array<Record<string, unknown>>).map((a) => ({ ...a, labels: { ...(a.labels as object), instance } })),
  });

  test('the same groupKey from two Alertmanagers (prod and staging) is two subjects: both are delivered', async () => {
    const secret = await subscribe('am-two', '--events', 'alert.firing', '--debounce', '1s', '--agent', 'none', '--prompt', '{externalURL}: {alerts.0.labels.instance}');
    const prod = await post('am-two', secret, alertmanager('http://alertmanager.prod.example.com:9093', 'prod-db-1'));
    const staging = await post('am-two', secret, alertmanager('http://alertmanager.staging.example.com:9093', 'staging-db-1'));
    expect([prod.status, staging.status]).toEqual([202, 202]);
    const events = await finalEvents('am-two', 2);
    expect(events[prod.body.event_id as string]).toMatchObject({ status: 'delivered', reply: 'http://alertmanager.prod.example.com:9093: prod-db-1' });
    expect(events[staging.body.event_id as string]).toMatchObject({ status: 'delivered', reply: 'http://alertmanager.staging.example.com:9093: staging-db-1' });
  }, 60_000);

  test('HA replicas (the same externalURL) still merge: the latest notification of the group runs', async () => {
    const secret = await subscribe('am-ha', '--events', 'alert.firing', '--debounce', '1s', '--agent', 'none', '--prompt', '{externalURL}: {alerts.0.labels.instance}');
    const first = await post('am-ha', secret, alertmanager('http://alertmanager.example.com:9093', 'db-1'));
    const second = await post('am-ha', secret, alertmanager('http://alertmanager.example.com:9093', 'db-2'));
    expect([first.status, second.status]).toEqual([202, 202]);
    const events = await finalEvents('am-ha', 2);
    expect(events[first.body.event_id as string]).toMatchObject({ status: 'superseded' });
    expect(events[second.body.event_id as string]).toMatchObject({ status: 'delivered', reply: 'http://alertmanager.example.com:9093: db-2' });
  }, 60_000);
});
