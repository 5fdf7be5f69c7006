/**
 * Alert senders that cannot set an event type (Alertmanager, Grafana, PagerDuty) post to
 * custom endpoints; without this, all their notifications are event `custom`, and firing
 * cannot be told from resolved by `--events`. Recognised by the shape of their payloads,
 * they get event types a filter can name: `alert.firing` / `alert.resolved` (Alertmanager
 * and Grafana) and PagerDuty's own `incident.<verb>` (`incident.triggered`,
 * `incident.resolved`, …). An explicit `X-Event-Type` or payload `event_type` still wins.
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
const VERB = /^[a-z][a-z0-9_]{0,63}$/;

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
    const [resource, verb] = type.split('.', 2);
    if (resource && verb && VERB.test(resource) && VERB.test(verb)) return { sender: 'pagerduty', event: resource, action: verb };
  }
  return undefined;
}
