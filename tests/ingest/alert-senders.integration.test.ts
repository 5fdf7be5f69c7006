/**
 * Alertmanager, Grafana and PagerDuty post to custom endpoints without an event type
 * header; their payloads are recognised so `--events alert.firing` / `alert.resolved` /
 * `incident.triggered` can tell their notifications apart (issue 23).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { alertSenderEvent } from '../../functions/core/events/alert-senders';
import { apiEvent } from '../support/requests';
import { bodyOf, type Harness, useIngestHarness } from '../support/ingest-harness';

const fixture = (path: string) => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', path), 'utf8')) as Record<string, unknown>;
const ALERTMANAGER = fixture('alerts/alertmanager.json');
const GRAFANA = fixture('alerts/grafana.json');
const PAGERDUTY = fixture('alerts/pagerduty_v3.json');

let h: Harness;
useIngestHarness((started) => {
  h = started;
});

async function post(name: string, secret: string, payload: unknown, headers: Record<string, string> = {}) {
  return h.handler(apiEvent({ path: `/webhooks/custom/${name}`, body: JSON.stringify(payload), headers: { authorization: `Bearer ${secret}`, ...headers } }));
}

describe('alert senders on custom endpoints', () => {
  test('Alertmanager firing and resolved notifications are alert.firing and alert.resolved', async () => {
    const firing = await h.addSubscription({ name: 'pages', events: ['alert.firing'] });
    const resolvedOnly = await h.addSubscription({ name: 'closed', events: ['alert.resolved'] });
    expect(bodyOf(await post('pages', firing.secret, ALERTMANAGER))).toMatchObject({ status: 'accepted', event: 'alert' });
    expect(h.queue.sent[0]).toMatchObject({ event: 'alert', action: 'firing' });
    expect(bodyOf(await post('closed', resolvedOnly.secret, ALERTMANAGER))).toMatchObject({ status: 'ignored', event: 'alert' });
    const resolved = { ...ALERTMANAGER, status: 'resolved' };
    expect(bodyOf(await post('closed', resolvedOnly.secret, resolved))).toMatchObject({ status: 'accepted' });
    expect(h.queue.sent[1]).toMatchObject({ event: 'alert', action: 'resolved' });
  });

  test('Grafana notifications are alert.firing / alert.resolved too', async () => {
    const sub = await h.addSubscription({ name: 'grafana', events: ['alert'] });
    expect(bodyOf(await post('grafana', sub.secret, GRAFANA))).toMatchObject({ status: 'accepted', event: 'alert' });
    expect(h.queue.sent[0]).toMatchObject({ event: 'alert', action: 'firing' });
    expect(alertSenderEvent(GRAFANA)?.sender).toBe('grafana');
    expect(alertSenderEvent(ALERTMANAGER)?.sender).toBe('alertmanager');
  });

  test('PagerDuty v3 webhooks keep their own vocabulary: incident.<verb>', async () => {
    const sub = await h.addSubscription({ name: 'pd', events: ['incident.priority_updated'] });
    expect(bodyOf(await post('pd', sub.secret, PAGERDUTY))).toMatchObject({ status: 'accepted', event: 'incident' });
    expect(h.queue.sent[0]).toMatchObject({ event: 'incident', action: 'priority_updated' });
    const triggered = { event: { ...(PAGERDUTY.event as object), event_type: 'incident.triggered' } };
    expect(alertSenderEvent(triggered)).toEqual({ sender: 'pagerduty', event: 'incident', action: 'triggered' });
  });

  test('PagerDuty event types with three parts keep their whole verb: incident.responder.added, incident.workflow.completed', async () => {
    const pagerduty = (eventType: string) => ({ event: { ...(PAGERDUTY.event as object), event_type: eventType } });
    expect(alertSenderEvent(pagerduty('incident.responder.added'))).toEqual({ sender: 'pagerduty', event: 'incident', action: 'responder.added' });
    const sub = await h.addSubscription({ name: 'workflow', events: ['incident.workflow.completed'] });
    expect(bodyOf(await post('workflow', sub.secret, pagerduty('incident.workflow.completed')))).toMatchObject({ status: 'accepted', event: 'incident' });
    expect(h.queue.sent[0]).toMatchObject({ event: 'incident', action: 'workflow.completed' });
    // The other verb of the family is another event, and the request log names it whole.
    expect(bodyOf(await post('workflow', sub.secret, pagerduty('incident.workflow.started')))).toMatchObject({ status: 'ignored', reason: 'Event not handled' });
    const reasons = (await h.requests.list({ limit: 10 })).flatMap((r) => r.candidates ?? []).map((c) => c.reason);
    expect(reasons).toEqual(expect.arrayContaining([
      'event filter incident.workflow.completed matches custom:incident.workflow.completed',
      'event filters incident.workflow.completed do not match custom:incident.workflow.started',
    ]));
  });

  test('an explicit X-Event-Type or payload event_type still wins', async () => {
    const sub = await h.addSubscription({ name: 'explicit', events: ['deploy', 'ops'] });
    expect(bodyOf(await post('explicit', sub.secret, ALERTMANAGER, { 'x-event-type': 'deploy' }))).toMatchObject({ status: 'accepted', event: 'deploy' });
    expect(h.queue.sent[0]?.action).toBeUndefined();
    expect(bodyOf(await post('explicit', sub.secret, { ...ALERTMANAGER, event_type: 'ops' }))).toMatchObject({ status: 'accepted', event: 'ops' });
  });

  test('shapes that only look alike are not alerts', () => {
    expect(alertSenderEvent({ groupKey: 'x', alerts: [], status: 'weird' })).toBeUndefined();
    expect(alertSenderEvent({ groupKey: 'x', status: 'firing' })).toBeUndefined();
    expect(alertSenderEvent({ event: { event_type: 'incident.triggered' } })).toBeUndefined();
    expect(alertSenderEvent({ event: { event_type: '../x.y z', resource_type: 'incident', occurred_at: 'now' } })).toBeUndefined();
    for (const eventType of ['incident.', 'incident..added', 'incident.responder.', 'incident.Responder.added', `incident.${'a.'.repeat(50)}b`]) {
      expect(alertSenderEvent({ event: { event_type: eventType, resource_type: 'incident', occurred_at: 'now' } })).toBeUndefined();
    }
  });
});
