/**
 * serve's stop signals. The first SIGINT or SIGTERM starts the graceful stop; a second one,
 * of either kind, ends the process at once with 128 + its number (130 / 143, as a shell
 * shows a process killed by it). The handlers stay installed for the whole run and the exit
 * is explicit: as PID 1 of a container (no --init) the kernel drops every signal the process
 * has no handler for, so the default action cannot be relied on.
 */
import { constants } from 'node:os';
import type { Logger } from '../../functions/core/log';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** Resolves once `stop` has run (whether it succeeded or not), after the first stop signal. */
export function untilStopped(logger: Logger, stop: (signal: NodeJS.Signals) => Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    let first: NodeJS.Signals | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      if (first) {
        // Lines pending are written at exit (log-writer.ts).
        logger.warn('second stop signal: stopping at once; what is unfinished goes back to the queue when serve starts again', { signal, first });
        process.exit(128 + constants.signals[signal]);
      }
      first = signal;
      void stop(signal).then(resolve, resolve);
    };
    for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  });
}
