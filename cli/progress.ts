/**
 * Progress while the CLI waits: on a terminal one line rewritten in place (a spinner, the
 * state and the seconds waited); piped, one line per change of state. Always on stderr,
 * so stdout keeps only the result.
 */
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface Progress {
  update(state: string): void;
  done(): void;
}

export function progress(label: string, stream: NodeJS.WriteStream = process.stderr, now: () => number = Date.now): Progress {
  const started = now();
  const tty = stream.isTTY === true;
  let last = '';
  let frame = 0;
  let drawn = false;
  return {
    update(state) {
      const seconds = ((now() - started) / 1000).toFixed(0);
      if (tty) {
        frame = (frame + 1) % FRAMES.length;
        stream.write(`\r\u001b[2K${FRAMES[frame]} ${label}: ${state} (${seconds}s)`);
        drawn = true;
      } else if (state !== last) {
        stream.write(`${label}: ${state} (${seconds}s)\n`);
      }
      last = state;
    },
    done() {
      if (tty && drawn) stream.write('\r\u001b[2K');
    },
  };
}
