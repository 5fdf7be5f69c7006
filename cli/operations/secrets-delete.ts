/** `hookagent secrets delete <NAME>`: removes the SSM parameter /hookagent/<stage>/<NAME>. */
import { isVariableName } from '../../functions/core/config/references';
import { HookError } from '../../functions/core/errors';
import { ssmParameterName } from '../../functions/aws/ssm-names';
import type { CliContext, GlobalOptions } from '../context';
import { configReferences } from '../secrets';
import { operationsTarget } from './deployment';


export async function deleteSecret(ctx: CliContext, options: GlobalOptions, name: string): Promise<void> {
  if (!isVariableName(name)) throw new HookError('invalid_name', `'${name}' is not a variable name: use letters, digits and _, not starting with a digit`);
  const target = operationsTarget(ctx, options, 'secrets delete');
  const parameter = ssmParameterName(target.stage, name);
  // The SDK loads for this command only (see cli/aws-stores.ts).
  const { DeleteParameterCommand, SSMClient } = await import('@aws-sdk/client-ssm');
  const client = new SSMClient(target.clientConfig);
  try {
    await client.send(new DeleteParameterCommand({ Name: parameter }));
  } catch (error) {
    if (error instanceof Error && error.name === 'ParameterNotFound') throw new HookError('secret_not_found', `No secret ${name} for stage '${target.stage}' (${parameter}); nothing was deleted`);
    throw new HookError('unavailable', `Could not delete ${parameter} in SSM Parameter Store (${error instanceof Error ? `${error.name}: ${error.message}` : String(error)})`, { cause: error });
  } finally {
    client.destroy();
  }
  ctx.out(`Deleted ${parameter}.`);
  if (configReferences(ctx.config).includes(name)) ctx.warn(`config.yaml still references \${${name}}: what uses it stops working within 5 minutes (that webhook source answers 401; events needing that target or agent fail) until it is set again or the reference removed.`);
}
