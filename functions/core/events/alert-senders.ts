/**
 * Alert senders that cannot set an event type (Alertmanager, Grafana, PagerDuty) post to
 * custom endpoints; without this, all their notifications are event `custom`, and firing
 * cannot be told from resolved by `--events`. Recognised by the shape of their payloads,
 * they get event types a filter can name: `alert.firing` / `alert.resolved` (Alertmanager
 * and Grafana) and PagerDuty's own `incident.<verb>` (`incident.triggered`,
 * `incident.resolved`, `incident.responder.added`, …). An explicit `X-Event-Type` or
 * payload `event_type` still wins.
 */
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);

export interface AlertSenderEvent {
  sender: 'alertmanager' | 'grafana' | 'pagerduty';
  event: string;
  action: string;
}

/** The event types alert senders get, with the actions each sends (undefined: any verb). */
export const ALERT_SENDER_ACTIONS: Readonly<Record<string, readonly string[] | undefined>> = { alert: ['firing', 'resolved'], incident: undefined };

const ALERT_STATUS = new Set(ALERT_SENDER_ACTIONS.alert);
const PART = /^[a-z][a-z0-9_]{0,63}$/;
/** An action is at most 100 characters, as any event type (classify.ts). */
const ACTION_MAX = 100;

export function alertSenderEvent(payload: Obj): AlertSenderEvent | undefined {
  // Alertmanager (webhook_config, version "4") and Grafana's unified alerting share the
  // notification shape: groupKey, status and an alerts array.
  if (typeof payload.groupKey === 'string' && Array.isArray(payload.alerts) && typeof payload.status === 'string' && ALERT_STATUS.has(payload.status)) {
    const grafana = payload.orgId !== undefined || typeof payload.state === 'string';
    return { sender: grafana ? 'grafana' : 'alertmanager', event: 'alert', action: payload.status };
  }
  // PagerDuty webhooks v3: { event: { event_type: "incident.triggered", resource_type: "incident", … } }.
  const event = obj(payload.event);
  const type = event?.event_type;
  if (typeof type === 'string' && typeof event?.resource_type === 'string' && typeof event.occurred_at === 'string') {
    // The verb is everything after the first dot: `incident.responder.added` is event `incident`,
    // action `responder.added`, which the filter `incident.responder.added` names (filters.ts).
    const dot = type.indexOf('.');
    const resource = type.slice(0, dot);
    const verb = type.slice(dot + 1);
    if (dot > 0 && PART.test(resource) && verb.length <= ACTION_MAX && verb.split('.').every((part) => PART.test(part))) {
      return { sender: 'pagerduty', event: resource, action: verb };
    }
  }
  return undefined;
}
