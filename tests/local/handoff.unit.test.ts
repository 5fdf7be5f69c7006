/** The in-process hand-off of messages from ingest to serve's worker: bounded, taken once, oldest kept. */
import { HANDOFF_STALE_MS, MessageHandoff } from '../../functions/local/sqlite/handoff';
import { messageJson } from '../../functions/core/message-json';
import type { QueueMessage } from '../../functions/core/types';

const message = (id: string, size = 100): QueueMessage => ({
  v: 1, event_id: id, subscription: 's', source: 'github', event: 'push', delivery_id: id, received_at: '2026-01-01T00:00:00Z', payload: { text: 'x'.repeat(size) },
});

test('a message is taken once; an unknown key gives nothing', () => {
  const handoff = new MessageHandoff();
  const m = message('e1');
  handoff.put('e1\u0000s', m, 0);
  expect(handoff.take('e2\u0000s')).toBeUndefined();
  expect(handoff.take('e1\u0000s')).toBe(m);
  expect(handoff.take('e1\u0000s')).toBeUndefined();
  expect(handoff.size).toBe(0);
});

test('when full it keeps the oldest (the consumer takes those first) and refuses new ones', () => {
  const one = messageJson(message('e0', 1000)).length;
  const handoff = new MessageHandoff(3 * one);
  for (let i = 0; i < 5; i++) handoff.put(`e${i}`, message(`e${i}`, 1000), 1000 + i);
  expect(handoff.size).toBe(3);
  expect(handoff.take('e3')).toBeUndefined();
  expect(handoff.take('e0')?.event_id).toBe('e0');
  // Room again: the next one is held.
  handoff.put('e5', message('e5', 1000), 2000);
  expect(handoff.take('e5')?.event_id).toBe('e5');
  // A message larger than the whole bound is never held.
  handoff.put('big', message('big', 10 * one), 2000);
  expect(handoff.take('big')).toBeUndefined();
});

test('entries nobody took for a minute make room (another process received them)', () => {
  const one = messageJson(message('e0', 1000)).length;
  const handoff = new MessageHandoff(2 * one);
  handoff.put('o1', message('o1', 1000), 0);
  handoff.put('o2', message('o2', 1000), 10);
  handoff.put('nw', message('nw', 1000), HANDOFF_STALE_MS - 1);
  expect(handoff.take('nw')).toBeUndefined();
  handoff.put('nw', message('nw', 1000), HANDOFF_STALE_MS + 5);
  expect(handoff.take('o1')).toBeUndefined();
  expect(handoff.take('o2')?.event_id).toBe('o2');
  expect(handoff.take('nw')?.event_id).toBe('nw');
});

test('a key put again replaces its entry without counting it twice', () => {
  const one = messageJson(message('e0', 1000)).length;
  const handoff = new MessageHandoff(2 * one);
  const second = message('e1', 1000);
  handoff.put('e1', message('e1', 1000), 0);
  handoff.put('e1', second, 1);
  handoff.put('e2', message('e2', 1000), 2);
  expect(handoff.size).toBe(2);
  expect(handoff.take('e1')).toBe(second);
});
