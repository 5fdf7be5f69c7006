/**
 * The one wrapper every command body runs in: it builds the command's context, and a failure
 * becomes exit 1 with its message (terminal-safe, with a hint where one helps) on stderr.
 */
import { createContext, type GlobalOptions } from './context';
import { formatError } from './hints';

export type Args = GlobalOptions & Record<string, unknown>;
export type CommandContext = ReturnType<typeof createContext>;

export function run(body: (argv: Args, ctx: CommandContext) => Promise<void>) {
  return async (argv: Args): Promise<void> => {
    try {
      await body(argv, createContext(argv));
    } catch (error) {
      process.stderr.write(formatError(error));
      process.exitCode = 1;
    }
  };
}
