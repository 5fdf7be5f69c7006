/** Registers the operations commands (issue 20) with yargs; cli/main.ts calls these. */
import type { Argv } from 'yargs';
import { run } from '../command-run';
import { listDeadLetters, redrive } from './dead-letters';
import { deleteSecret } from './secrets-delete';
import { runStatus } from './status';

/** `hookagent status`. */
export function statusCommand(y: Argv): Argv {
  return y.command('status', 'health of the deployed stage (URL, /health, queue, dead letters, missing secrets, config drift) or, without one, of the local service (serve, /health, queue, dead letters, held events, missing secrets); exit 3 when something needs attention', (c) => c
    .option('json', { type: 'boolean', describe: 'print a JSON object' })
    .example('$0 status', 'the local service (no aws section in config.yaml)')
    .example('$0 status --stage prod', '')
    .example('$0 status --stage prod --json', ''),
  // Not run(): a config.yaml that does not validate is the local status's to report.
  runStatus);
}

/** `hookagent webhook dead-letters` and `redrive`. */
export function deadLetterCommands(y: Argv): Argv {
  return y
    .command('dead-letters', 'events the worker gave up on, with the reason', (c) => c
      .option('json', { type: 'boolean', describe: 'print a JSON array' })
      .example('$0 webhook dead-letters --stage prod', ''),
    run((a, ctx) => listDeadLetters(ctx, a, Boolean(a.json))))
    .command('redrive [event-ids..]', 'move dead letters back to the queue: all, or those of the given event ids', (c) => c
      .positional('event-ids', { type: 'string', array: true, describe: 'event ids (default: every dead letter)' })
      .example('$0 webhook redrive --stage prod', 'every dead letter')
      .example('$0 webhook redrive evt_0mws0mwck916a3c297ed36480 --stage prod', 'one event'),
    run((a, ctx) => redrive(ctx, a, ((a.eventIds as string[] | undefined) ?? []).map(String))));
}

/** `hookagent secrets delete`. */
export function secretsDeleteCommand(y: Argv): Argv {
  return y.command('delete <name>', 'delete the SSM parameter /hookagent/<stage>/<name>', (c) => c
    .positional('name', { type: 'string', demandOption: true })
    .example('$0 secrets delete OLD_TOKEN --stage prod', ''),
  run((a, ctx) => deleteSecret(ctx, a, String(a.name))));
}
