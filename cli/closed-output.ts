/**
 * When the reader of the output goes away (`hookagent webhook requests --json | head -1`,
 * `webhook events <name> --follow | head -3`), a write fails with EPIPE. Without a handler
 * Node throws it as an unhandled 'error' event: a stack trace and exit 1. Instead the CLI
 * ends quietly, with exit 0, as the reader chose to stop reading and nothing went wrong:
 * - what is left to print is dropped (the stream is closed); a one-shot command still
 *   finishes its work (a `subscribe … | head -0` still creates the subscription);
 * - a command that runs until stopped (`events --follow`, `serve`, `console`) stops as on
 *   SIGTERM, through its own handler (serve waits for in-flight work as usual), when its
 *   next write to stdout finds no reader (as a process killed by SIGPIPE would: serve's
 *   logs go to stderr, so a closed stdout alone does not stop it).
 * Exit 0 rather than 141 (a shell's code for a process killed by SIGPIPE): the contract's
 * codes are 0, 1 and 2, and under `set -o pipefail` a 141 would fail `… | head -1`.
 */

/** Installed once, at the CLI's start, on stdout and stderr. */
export function endQuietlyWhenReaderLeaves(stdout: NodeJS.WriteStream = process.stdout, stderr: NodeJS.WriteStream = process.stderr): void {
  let stopping = false;
  stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') {
      // Not a reader that left (a full disk, a closed descriptor): say so, as a refused operation.
      if (!stderr.destroyed) stderr.write(`error: cannot write the output: ${error.message}\n`);
      process.exit(1);
    }
    if (stopping) return;
    stopping = true;
    if (process.listenerCount('SIGTERM') > 0) process.emit('SIGTERM', 'SIGTERM');
  });
  // `2>&1 | head -1`: stdout's handler decides; a warning that finds no reader is dropped.
  stderr.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') process.exit(1);
  });
}
