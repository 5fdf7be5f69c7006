/**
 * `webhook test` and `test --send` render and send "a realistic sample of the subscription's
 * first event": for an `incident.<verb>` filter, PagerDuty's sample must be that event, or
 * the subscription never takes it (hunt 10 D2).
 */
import { ALERT_SAMPLES, sampleFor } from '../../cli/samples';
import { classifyEvent } from '../../functions/core/events/classify';
import { routeMatches } from '../../functions/core/events/filters';

const eventType = (payload: Record<string, unknown>) => (payload.event as { event_type: string }).event_type;

describe('sampleFor: PagerDuty samples for incident.<verb> filters', () => {
  test.each(['incident.triggered', 'incident.resolved', 'incident.responder.added', 'custom:incident.workflow.completed'])('%s: the sample is that event, and the filter takes it', (filter) => {
    const sample = sampleFor(filter);
    const rest = filter.replace(/^custom:/, '');
    const action = rest.slice('incident.'.length);
    expect(sample).toMatchObject({ source: 'custom', event: 'incident', action });
    const payload = sample!.payload;
    expect(eventType(payload)).toBe(rest);
    // As the service classifies it on the custom endpoint, and as its event filters judge it.
    const identity = classifyEvent('custom', {}, payload);
    expect(identity).toMatchObject({ event: 'incident', action });
    expect(routeMatches([filter], 'custom', identity!.event, identity!.action)).toMatchObject({ matched: true });
  });

  test('a bare `incident` filter takes the sample as it ships (incident.priority_updated), which is left unchanged', () => {
    expect(sampleFor('incident.triggered')).toBeDefined();
    expect(sampleFor('incident')).toMatchObject({ source: 'custom', event: 'incident', action: 'priority_updated', payload: ALERT_SAMPLES.pagerduty });
    expect(eventType(ALERT_SAMPLES.pagerduty)).toBe('incident.priority_updated');
  });
});
