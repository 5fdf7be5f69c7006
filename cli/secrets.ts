/**
 * `hookagent secrets …`: the SSM SecureString parameters `/hookagent/<stage>/<VAR>` that
 * a deployment's `${VAR}` references resolve from. Values go in through stdin or a
 * prompt that does not echo, and never come out: `list` shows names only.
 */
import type { SSMClient } from '@aws-sdk/client-ssm';
import { isVariableName, referencedNames } from '../functions/core/config/references';
import { join } from 'node:path';
import { HookError } from '../functions/core/errors';
import { ssmParameterName } from '../functions/aws/ssm-names';
import { awsDeployment, type CliContext, type GlobalOptions } from './context';
import { commandName } from './invocation';

/** Only the lengths AWS accepts for a Standard-tier parameter. */
const MAX_VALUE_BYTES = 4096;

/** The SDK loads here, for a deployment only (`import()`): see cli/aws-stores.ts. */
async function deploymentOf(ctx: CliContext, options: GlobalOptions): Promise<{ stage: string; client: SSMClient; ssm: typeof import('@aws-sdk/client-ssm') }> {
  const deployment = awsDeployment(ctx.config, options);
  if (!deployment) {
    // Locally there is nothing to store them in but the file serve and the CLI read (cli/local/first-run.ts).
    throw new HookError('no_deployment', `Secrets are stored per AWS deployment: pass --stage (and --region) or add \`aws: { stage, region }\` to config.yaml. Locally, put NAME=value lines in ${join(ctx.configDir, '.env')} (or set environment variables): \`hookagent serve\` reads them and picks up a change without a restart.`);
  }
  const ssm = await import('@aws-sdk/client-ssm');
  return { stage: deployment.stage, client: new ssm.SSMClient(deployment.region ? { region: deployment.region } : {}), ssm };
}

function ssmFailure(action: string, error: unknown): HookError {
  const name = error instanceof Error ? error.name : 'Error';
  const detail = error instanceof Error ? error.message : String(error);
  return new HookError('unavailable', `Could not ${action} in SSM Parameter Store (${name}: ${detail})`, { cause: error });
}

export async function setSecret(ctx: CliContext, options: GlobalOptions, name: string, readValue: (prompt: string) => Promise<string>): Promise<void> {
  if (!isVariableName(name)) {
    throw new HookError('invalid_name', `'${name}' is not a variable name: use letters, digits and _, not starting with a digit (as config.yaml's` + ' ${GITHUB_WEBHOOK_SECRET})');
  }
  const { stage, client, ssm } = await deploymentOf(ctx, options);
  const value = await readValue(`Value for ${name} (input hidden): `);
  if (value.length === 0) throw new HookError('empty_value', `No value given for ${name}; nothing was stored`);
  if (Buffer.byteLength(value) > MAX_VALUE_BYTES) throw new HookError('value_too_large', `The value is longer than SSM's ${MAX_VALUE_BYTES} bytes; nothing was stored`);
  const parameter = ssmParameterName(stage, name);
  try {
    const result = await client.send(new ssm.PutParameterCommand({ Name: parameter, Value: value, Type: 'SecureString', Overwrite: true }));
    ctx.out(`Stored ${parameter} (SecureString, version ${result.Version ?? '?'}); functions pick it up on their next cold start.`);
  } catch (error) {
    throw ssmFailure(`store ${parameter}`, error);
  } finally {
    client.destroy();
  }
}

export async function listSecrets(ctx: CliContext, options: GlobalOptions, json: boolean): Promise<void> {
  const { stage, client, ssm } = await deploymentOf(ctx, options);
  const prefix = ssmParameterName(stage, '');
  const names: string[] = [];
  try {
    let token: string | undefined;
    do {
      const page = await client.send(new ssm.GetParametersByPathCommand({ Path: prefix, WithDecryption: false, ...(token ? { NextToken: token } : {}) }));
      for (const parameter of page.Parameters ?? []) if (parameter.Name) names.push(parameter.Name.slice(prefix.length));
      token = page.NextToken;
    } while (token);
  } catch (error) {
    throw ssmFailure(`list ${prefix}*`, error);
  } finally {
    client.destroy();
  }
  names.sort();
  ctx.out(json ? JSON.stringify(names) : names.length > 0 ? names.join('\n') : `(no secrets under ${prefix})`);
  const missing = configReferences(ctx.config).filter((name) => !names.includes(name));
  if (missing.length > 0) ctx.warn(`config.yaml references ${missing.join(', ')}, not set for stage '${stage}': ${commandName()} secrets set <VAR> --stage ${stage}`);
}

/** Every `${VAR}` named anywhere in the configuration. */
export function configReferences(config: unknown): string[] {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string') for (const name of referencedNames(value)) found.add(name);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(config);
  return [...found].sort();
}

/** The terminal side of a prompt: process.stdin when it is a TTY. */
export interface SecretInput extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

/** The value from a terminal prompt without echo, else all of stdin (one trailing newline dropped). */
export function readSecretValue(prompt: string, stdin: SecretInput = process.stdin, stderr: NodeJS.WritableStream = process.stderr): Promise<string> {
  if (!stdin.isTTY || !stdin.setRawMode) {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      stdin.on('data', (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)));
      stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')));
      stdin.on('error', reject);
    });
  }
  const setRawMode = stdin.setRawMode.bind(stdin);
  stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let value = '';
    setRawMode(true);
    stdin.setEncoding('utf8');
    const finish = (error?: HookError) => {
      setRawMode(false);
      stdin.pause();
      stdin.removeListener('data', onData);
      stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (text: string | Buffer) => {
      for (const char of String(text)) {
        if (char === '\r' || char === '\n') return finish();
        if (char === '\u0003' || char === '\u0004') return finish(new HookError('cancelled', 'Cancelled; nothing was stored'));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
      }
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}
