/**
 * serve's stop signals. The handlers are installed as serve starts, not once it listens: a
 * stop during start-up (config load, store open, listen) then ends it as a normal stop does
 * (what it took released, exit 0) instead of Node's default (killed, no line), and as PID 1
 * of a container (no --init), where the kernel drops every signal the process has no handler
 * for, it is not lost while serve goes on to listen. The first SIGINT or SIGTERM starts the
 * stop; a second one, of either kind, ends the process at once with 128 + its number (130 /
 * 143, as a shell shows a process killed by it). The exit is explicit for the same reason.
 */
import { constants } from 'node:os';
import type { Logger } from '../../functions/core/log';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export interface StopSignals {
  /** The first stop signal, once one came. */
  readonly received: NodeJS.Signals | undefined;
  /** Runs `stop` on the first stop signal (at once if it came already); resolves once it has run, whether it succeeded or not. */
  untilStopped(stop: (signal: NodeJS.Signals) => Promise<void>): Promise<void>;
}

/** Installs serve's SIGINT/SIGTERM handlers for the rest of the process's life. */
export function watchStopSignals(logger: Logger): StopSignals {
  let first: NodeJS.Signals | undefined;
  let onFirst: ((signal: NodeJS.Signals) => void) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (first) {
      // Lines pending are written at exit (log-writer.ts).
      logger.warn('second stop signal: stopping at once; what is unfinished goes back to the queue when serve starts again', { signal, first });
      process.exit(128 + constants.signals[signal]);
    }
    first = signal;
    logger.info('stopping', { signal });
    onFirst?.(signal);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  return {
    get received() {
      return first;
    },
    untilStopped: (stop) => new Promise<void>((resolve) => {
      onFirst = (signal) => void stop(signal).then(resolve, resolve);
      if (first) onFirst(first);
    }),
  };
}

/**
 * What serve's start-up has taken so far (the store and its lock, timers, watchers, the
 * port), given back newest first when start-up cannot finish: listen failed, or a stop
 * signal came.
 */
export class StartUp {
  private readonly taken: Array<() => void | Promise<void>> = [];

  constructor(private readonly signals: StopSignals, private readonly logger: Logger) {}

  /** Remembers how to give back what was just taken. */
  took(release: () => void | Promise<void>): void {
    this.taken.push(release);
  }

  /** Gives back everything taken, newest first. */
  async release(): Promise<void> {
    for (let release = this.taken.pop(); release; release = this.taken.pop()) await release();
  }

  /** True once a stop signal came: everything taken is given back and it is logged; serve then returns instead of going on. */
  async stopped(): Promise<boolean> {
    const signal = this.signals.received;
    if (signal === undefined) return false;
    await this.release();
    this.logger.info('stopped during start-up', { signal });
    return true;
  }
}
