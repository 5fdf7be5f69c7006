/** serve's log lines: one write per event-loop turn, in order, none lost. */
import { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { turnBufferedWriter } from '../../cli/local/log-writer';

function collector() {
  const writes: string[] = [];
  const stream = new Writable({ write(chunk: Buffer, _encoding, done) { writes.push(chunk.toString()); done(); } });
  return { writes, stream };
}

test('lines of one turn go out in one write, in order; the next turn gets its own', async () => {
  const { writes, stream } = collector();
  const write = turnBufferedWriter(stream);
  write('a\n');
  write('b\n');
  expect(writes).toEqual([]);
  await nextTurn();
  expect(writes).toEqual(['a\nb\n']);
  write('c\n');
  await nextTurn();
  expect(writes).toEqual(['a\nb\n', 'c\n']);
});

test('a turn that logs a lot is written as it goes, not held in memory', async () => {
  const { writes, stream } = collector();
  const write = turnBufferedWriter(stream);
  const line = `${'x'.repeat(1023)}\n`;
  for (let i = 0; i < 130; i++) write(line);
  expect(writes.length).toBe(2);
  await nextTurn();
  expect(writes.join('')).toBe(line.repeat(130));
});
