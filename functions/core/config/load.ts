/**
 * config.yaml: parse (js-yaml, bounded alias expansion), validate (schema.ts's JSON Schema,
 * compiled by ajv at build time into config-validator.generated.ts), then normalise
 * (normalise.ts) and, separately, resolve `${VAR}` references (resolve.ts). Problems are
 * reported by issues.ts with their key paths.
 */
import * as yaml from 'js-yaml';
import { fail, ok, type Result } from '../errors';
import { validateConfig as validate } from './config-validator.generated';
import { configError, literalSecretIssues, schemaIssues, type ConfigError, type ConfigIssue } from './issues';
import { normalise } from './normalise';
import type { RawConfig } from './raw';
import { protectReferences, restoreReferences } from './references';
import { MAX_CONFIG_VALUES, oversizedKey } from './size';
import type { Config } from './types';

export type { ConfigError, ConfigIssue } from './issues';
export { DEFAULTS, MAX_PAYLOAD_LIMIT } from './normalise';
export { resolveConfig } from './resolve';

/** Parses and validates config text. An empty file is a valid, all-defaults configuration. */
export function parseConfig(text: string): Result<Config, ConfigError> {
  const { text: safeText, bad } = protectReferences(text);
  if (bad.length > 0) {
    return fail(configError(bad.map((b) => ({
      path: '',
      message: `line ${b.line}: ${b.text} is not a valid reference; write \${VAR_NAME} with letters, digits and underscores`,
    }))));
  }
  let document: unknown;
  // js-yaml 5 refuses an empty stream; a file of comments only means "all defaults".
  const empty = safeText.split('\n').every((line) => /^\s*(#.*)?$/.test(line));
  try {
    document = empty ? {} : yaml.load(safeText, { schema: yaml.CORE_SCHEMA });
  } catch (error) {
    const reason = error instanceof yaml.YAMLException ? error.reason : String(error);
    const line = error instanceof yaml.YAMLException && error.mark ? ` at line ${error.mark.line + 1}` : '';
    return fail(configError([{ path: '', message: `config.yaml is not valid YAML${line}: ${reason}` }]));
  }
  if (document === null || document === undefined) document = {};
  const oversized = oversizedKey(document);
  if (oversized) return fail(configError([{ path: oversized.path, message: `expands to more than ${MAX_CONFIG_VALUES} values (YAML aliases repeat what they name); write the values out` }]));
  if (typeof document !== 'object' || Array.isArray(document)) {
    return fail(configError([{ path: '', message: 'config.yaml must be a mapping of sections (webhooks, agent, delivery, aws)' }]));
  }
  const raw = restoreReferences(document) as Record<string, unknown>;
  const secretIssues = literalSecretIssues(raw, '');
  if (!validate(raw)) {
    // Every error at once: the value checks the schema leaves to normalise (durations,
    // sizes, addresses) too, where they can run on what the schema refused; a key the
    // schema already named is not named twice.
    const schema = schemaIssues(validate.errors ?? []);
    const more: ConfigIssue[] = [];
    try {
      normalise(raw as RawConfig, more);
    } catch {
      // Values of the wrong type reach normalise here: what it could check is reported.
    }
    const named = new Set(schema.map((issue) => issue.path));
    return fail(configError([...schema, ...more.filter((issue) => !named.has(issue.path)), ...secretIssues]));
  }
  const issues = [...secretIssues];
  // The schema held: the document has the type the schema describes (raw.ts).
  const config = normalise(raw as RawConfig, issues);
  return issues.length > 0 ? fail(configError(issues)) : ok(config);
}
