/** The `hookagent console` command: options, checks and examples. */
import type { Argv, CommandModule } from 'yargs';
import { createContext, type GlobalOptions } from '../context';
import { reportFailure } from '../command-run';
import { checkHost, checkPort } from '../usage-errors';
import { runConsole } from './command';

export const consoleCommand: CommandModule<GlobalOptions, GlobalOptions & { port: number; host: string; authToken?: string }> = {
  command: 'console',
  describe: 'open the event console: a local web page over the same stores as the CLI',
  builder: (y: Argv<GlobalOptions>) => y
    // requiresArg, as serve's: a bare --port/--host is an error, never the default in silence; `--port -` is its (refused) value.
    .option('port', { type: 'number', default: 8645, requiresArg: true, describe: 'port to listen on' })
    .option('host', { type: 'string', default: '127.0.0.1', requiresArg: true, describe: 'address to listen on; anything but loopback needs --auth-token' })
    .option('auth-token', { type: 'string', describe: 'a token the browser must present (open /console?token=…); required off loopback' })
    .example('$0 console', 'then open http://127.0.0.1:8645/console')
    .example('$0 console --host 0.0.0.0 --auth-token "$(openssl rand -hex 24)"', 'reachable from other machines, behind a token')
    // A usage error like serve's: the same message, exit 2.
    .check((a) => checkPort(a.port) && checkHost(a.host)) as Argv<GlobalOptions & { port: number; host: string; authToken?: string }>,
  handler: async (argv) => {
    try {
      const ctx = createContext(argv);
      await runConsole(ctx, argv, { port: argv.port, host: argv.host, ...(argv.authToken !== undefined ? { authToken: argv.authToken } : {}) });
      process.exit(0);
    } catch (error) {
      process.exit(reportFailure(error));
    }
  },
};
