/**
 * The one wrapper every command body runs in: it builds the command's context, and a failure
 * becomes exit 1 with its message (terminal-safe, with a hint where one helps) on stderr.
 */
import { isHookError } from '../functions/core/errors';
import { createContext, type GlobalOptions } from './context';
import { formatError } from './hints';
import { asInvoked } from './invocation';

export type Args = GlobalOptions & Record<string, unknown>;
export type CommandContext = ReturnType<typeof createContext>;

export function run(body: (argv: Args, ctx: CommandContext) => Promise<void>) {
  return async (argv: Args): Promise<void> => {
    try {
      await body(argv, createContext(argv));
    } catch (error) {
      process.exitCode = reportFailure(error);
    }
  };
}

/**
 * Writes a command's failure to stderr; returns its exit code: 2 for a usage error (reported
 * as main.ts reports yargs' own), else 1.
 */
export function reportFailure(error: unknown): number {
  if (isHookError(error) && error.code === 'usage_error') {
    process.stderr.write(asInvoked(`error: ${error.message}\nRun with --help for usage and an example.\n`));
    return 2;
  }
  process.stderr.write(formatError(error));
  return 1;
}
