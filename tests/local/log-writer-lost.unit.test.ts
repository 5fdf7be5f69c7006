/** serve's log writer when the log cannot be written (a full disk, a closed pipe): lines are dropped and counted, never thrown. */
import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Writable } from 'node:stream';
import { turnBufferedWriter } from '../../cli/local/log-writer';

test('a stream whose write throws (ENOSPC) loses those lines, counted in a note before the next lines that can be written', async () => {
  const writes: string[] = [];
  let full = true;
  const stream = new Writable({ write(chunk: Buffer, _encoding, done) { writes.push(chunk.toString()); done(); } });
  const write = stream.write.bind(stream);
  stream.write = ((chunk: string) => {
    if (full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    return write(chunk);
  }) as typeof stream.write;
  const log = turnBufferedWriter(stream, { onLost: (count) => `lost ${count}\n` });
  log('a\n');
  log('b\n');
  await nextTurn();
  log('c\n');
  await nextTurn();
  expect(writes).toEqual([]);
  full = false;
  log('d\n');
  await nextTurn();
  expect(writes).toEqual(['lost 3\nd\n']);
  log('e\n');
  await nextTurn();
  expect(writes).toEqual(['lost 3\nd\n', 'e\n']);
});

test('a pipe or socket that fails later (an error event) does not throw either', async () => {
  const stream = new Writable({ write(_chunk, _encoding, done) { done(Object.assign(new Error('EPIPE'), { code: 'EPIPE' })); } });
  const log = turnBufferedWriter(stream);
  log('a\n');
  await nextTurn();
  log('b\n');
  await nextTurn();
  await new Promise<void>((resolve) => process.nextTick(resolve));
  expect(stream.destroyed).toBe(true);
});

const run = existsSync('/dev/full') ? test : test.skip;
run('a file descriptor on a full device (/dev/full) is written with writeSync: no throw, and a regular file gets every line', async () => {
  const fullFd = openSync('/dev/full', 'w');
  const file = join(tmpdir(), `hookagent-log-${process.pid}.txt`);
  const fileFd = openSync(file, 'w');
  try {
    const onFull = turnBufferedWriter({ fd: fullFd, write: () => { throw new Error('not used'); }, on: () => undefined } as unknown as NodeJS.WritableStream);
    onFull('x\n');
    await nextTurn();
    const onFile = turnBufferedWriter({ fd: fileFd, write: () => { throw new Error('not used'); }, on: () => undefined } as unknown as NodeJS.WritableStream);
    onFile('y\n');
    onFile('z\n');
    await nextTurn();
    expect(readFileSync(file, 'utf8')).toBe('y\nz\n');
  } finally {
    closeSync(fullFd);
    closeSync(fileFd);
    rmSync(file, { force: true });
  }
});
