import { newEventId } from '../../functions/core/ids';

describe('event ids', () => {
  test('ids made in one millisecond sort in the order they were made (arrival order)', () => {
    const now = Date.UTC(2026, 10, 24, 12);
    const ids = Array.from({ length: 200 }, () => newEventId(now));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^evt_[0-9a-z]{9}[0-9a-f]{16}$/);
  });

  test('the millisecond decides first, whatever the order of the calls', () => {
    const later = newEventId(Date.UTC(2026, 10, 24, 12, 0, 1));
    const earlier = newEventId(Date.UTC(2026, 10, 24, 12, 0, 0));
    expect(earlier < later).toBe(true);
    expect(earlier.slice(4, 13)).toBe(Date.UTC(2026, 10, 24, 12, 0, 0).toString(36).padStart(9, '0'));
  });
});
