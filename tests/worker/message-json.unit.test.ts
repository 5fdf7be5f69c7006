/** Queue message bodies written with the payload's own text spliced in: the same message once parsed. */
import { messageJson, parseQueueMessage, rememberPayloadText } from '../../functions/core/worker/message';
import type { QueueMessage } from '../../functions/core/types';

const base = (payload?: Record<string, unknown>): QueueMessage => ({
  v: 1, event_id: 'evt_1', subscription: 's', source: 'github', event: 'push', delivery_id: 'd', received_at: '2026-01-01T00:00:00.000Z',
  ...(payload ? { payload } : { payload_ref: 'payloads/evt_1' }),
});

describe('messageJson', () => {
  test.each([
    ['spaces and newlines', ' {\n "a" : [1, 2.50, {"b": null}], "t": "x\\u2028y\\"z"\n} '],
    ['unicode and escapes', '{"name":"Zoë 🚀","path":"C:\\\\dir","tab":"\\t"}'],
    ['an empty object', '{}'],
    ['duplicate keys (the last wins, as JSON.parse decides)', '{"a":1,"a":2}'],
  ])('with the remembered text (%s) it parses back to the same message', (_name, text) => {
    const payload = JSON.parse(text) as Record<string, unknown>;
    rememberPayloadText(payload, text);
    const message = base(payload);
    const json = messageJson(message);
    expect(json).toContain(text);
    expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(message)));
    expect(parseQueueMessage(json)).toEqual(message);
  });

  test('without a remembered text, and for a payload stored apart, it is JSON.stringify', () => {
    const message = base({ a: 1 });
    expect(messageJson(message)).toBe(JSON.stringify(message));
    expect(messageJson(base())).toBe(JSON.stringify(base()));
  });

  test('optional fields before the payload keep the object well formed', () => {
    const payload = { x: [1] };
    rememberPayloadText(payload, '{"x":[1]}');
    const message: QueueMessage = { ...base(payload), action: 'opened', subject_key: 'github:o/r#1' };
    expect(JSON.parse(messageJson(message))).toEqual(message);
  });
});
