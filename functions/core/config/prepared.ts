/**
 * The configuration as a deployed function reads it: config.yaml is parsed, validated and
 * normalised once, at packaging (scripts/build-lambda.mjs, with the same loader as the
 * CLI), and written as JSON beside each bundle. A cold start then reads JSON instead of
 * loading js-yaml, the schema validator and the normaliser: about 110 KB of each Lambda
 * bundle, parsed and initialised on every cold start before this change (issue 20).
 * `${VAR}` references stay in the file and are resolved at run time, as before.
 */
import { join } from 'node:path';
import { HookError } from '../errors';
import { isObject, readPreparedJson } from '../prepared-file';
import { MAX_CONFIG_BYTES } from './size';
import type { AgentProvider, Config } from './types';

export const PREPARED_CONFIG_FILE = 'config.json';
/** Bumped when `Config`'s shape changes: a bundle refuses a file prepared for another shape. */
export const PREPARED_CONFIG_FORMAT = 1;
/** JSON written with indentation takes more room than the YAML it came from. */
const MAX_PREPARED_BYTES = 4 * MAX_CONFIG_BYTES;
const PROVIDERS: readonly AgentProvider[] = ['echo', 'bedrock', 'openai', 'anthropic'];

/** The file's text for a configuration that `parseConfig` accepted. */
export function preparedConfigText(config: Config): string {
  return `${JSON.stringify({ hookagent_prepared_config: PREPARED_CONFIG_FORMAT, config }, null, 2)}\n`;
}

const isCount = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/**
 * What is wrong with a parsed file, if anything. The file comes from hookagent's own
 * build, so this is no second schema: it checks the marker and the fields every function
 * reads without further checks, so that a damaged or hand-edited file fails at start with
 * its name instead of later with a TypeError.
 */
function problemOf(document: unknown): string | undefined {
  if (!isObject(document) || !('hookagent_prepared_config' in document)) return 'it is not a configuration prepared by hookagent';
  if (document.hookagent_prepared_config !== PREPARED_CONFIG_FORMAT) {
    return `it was prepared in format ${JSON.stringify(document.hookagent_prepared_config)}; this bundle reads format ${PREPARED_CONFIG_FORMAT}`;
  }
  const config = document.config;
  if (!isObject(config)) return '"config" is not an object';
  for (const section of ['webhooks', 'agent', 'delivery'] as const) if (!isObject(config[section])) return `"config.${section}" is not an object`;
  const { webhooks, agent, delivery } = config as { webhooks: Record<string, unknown>; agent: Record<string, unknown>; delivery: Record<string, unknown> };
  if (!isCount(webhooks.max_payload_size)) return '"config.webhooks.max_payload_size" is not a number of bytes';
  for (const source of ['github', 'gitlab'] as const) {
    const secrets = webhooks[source];
    if (secrets !== undefined && !(isObject(secrets) && Array.isArray(secrets.secret) && secrets.secret.every((s) => typeof s === 'string'))) {
      return `"config.webhooks.${source}.secret" is not a list of strings`;
    }
  }
  if (!PROVIDERS.includes(agent.provider as AgentProvider)) return `"config.agent.provider" is not one of ${PROVIDERS.join(', ')}`;
  for (const key of ['timeout_ms', 'max_steps'] as const) if (!isCount(agent[key])) return `"config.agent.${key}" is not a number`;
  if (!isCount(delivery.timeout_ms)) return '"config.delivery.timeout_ms" is not a number';
  if (!isObject(delivery.codehost)) return '"config.delivery.codehost" is not an object';
  return undefined;
}

/** Reads `{dir}/config.json`; anything but a file prepared by this hookagent is a `config_invalid` HookError that says how to fix it. */
export function readPreparedConfig(dir: string): Config {
  const file = join(dir, PREPARED_CONFIG_FILE);
  const repackage = 'package the service again (npx osls package or deploy prepares it from config.yaml)';
  const read = readPreparedJson(file, MAX_PREPARED_BYTES, 'the prepared configuration');
  if (!read.ok) {
    const reason = read.failure === 'missing' ? 'is missing' : read.failure === 'not_json' ? `is not valid JSON (${read.detail})` : `cannot be read (${read.detail})`;
    throw new HookError('config_invalid', `The prepared configuration ${file} ${reason}: ${repackage}`, { cause: read.cause });
  }
  const document = read.document;
  const problem = problemOf(document);
  if (problem) throw new HookError('config_invalid', `The prepared configuration ${file} cannot be used: ${problem}; ${repackage}`);
  return (document as { config: Config }).config;
}
