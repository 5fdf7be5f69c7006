/**
 * serve's log output: lines written in one event-loop turn go to stderr in one write. A
 * write to a pipe is a synchronous system call per line otherwise, and under load serve
 * logs a few lines per event. What is pending is written synchronously at exit, so a
 * process that stops (or fails) still prints its last lines; a `kill -9` can lose at most
 * the lines of the turn it interrupts.
 */
const FLUSH_BYTES = 64 * 1024;

export function turnBufferedWriter(stream: NodeJS.WritableStream = process.stderr): (line: string) => void {
  let pending: string[] = [];
  let size = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    size = 0;
    // Synchronous for files, terminals and (on Linux) pipes, as a line-by-line write was.
    stream.write(text);
  };
  process.on('exit', flush);
  return (line: string) => {
    pending.push(line);
    size += line.length;
    if (size >= FLUSH_BYTES) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}
