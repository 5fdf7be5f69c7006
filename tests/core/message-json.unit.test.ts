/** Queue message text with the sender's body spliced in as the payload: the same message once parsed. */
import { messageJson, rememberMessageJson } from '../../functions/core/message-json';
import { parseQueueMessage } from '../../functions/core/worker/message';
import type { QueueMessage } from '../../functions/core/types';

const base = (payload?: Record<string, unknown>): QueueMessage => ({
  v: 1, event_id: 'evt_1', subscription: 's', source: 'github', event: 'push', delivery_id: 'd', received_at: '2026-01-01T00:00:00.000Z',
  ...(payload ? { payload } : { payload_ref: 'payloads/evt_1' }),
});

test.each([
  ['spaces and newlines', ' {\n "a" : [1, 2.50, {"b": null}], "t": "x\\u2028y\\"z"\n} '],
  ['unicode and escapes', '{"name":"Zoë 🚀","path":"C:\\\\dir","tab":"\\t"}'],
  ['an empty object', '{}'],
  ['duplicate keys (the last wins, as JSON.parse decides)', '{"a":1,"a":2}'],
])('with the body text (%s) it parses back to the same message', (_name, text) => {
  const message = base(JSON.parse(text) as Record<string, unknown>);
  rememberMessageJson(message, text);
  const json = messageJson(message);
  expect(json).toContain(text);
  expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(message)));
  expect(parseQueueMessage(json)).toEqual(message);
});

test('without a remembered text, for a payload stored apart, and for text with a lone surrogate, it is JSON.stringify', () => {
  const message = base({ a: 1 });
  expect(messageJson(message)).toBe(JSON.stringify(message));
  const apart = base();
  rememberMessageJson(apart, '{"a":1}');
  expect(messageJson(apart)).toBe(JSON.stringify(apart));
  const lone = base({ t: '\ud800' });
  rememberMessageJson(lone, '{"t":"\ud800"}');
  expect(messageJson(lone)).toBe(JSON.stringify(lone));
});

test('optional fields before the payload keep the object well formed', () => {
  const message: QueueMessage = { ...base({ x: [1] }), action: 'opened', subject_key: 'github:o/r#1' };
  rememberMessageJson(message, '{"x":[1]}');
  expect(JSON.parse(messageJson(message))).toEqual(message);
});
