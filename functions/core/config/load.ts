/**
 * config.yaml: parse (js-yaml, bounded alias expansion), validate (schema.ts's JSON Schema,
 * compiled by ajv at build time into config-validator.generated.ts), then normalise
 * (normalise.ts) and, separately, resolve `${VAR}` references (resolve.ts). Problems are
 * reported by issues.ts with their key paths.
 */
import * as yaml from 'js-yaml';
import { fail, ok, type Result } from '../errors';
import { validateConfig as validate } from './config-validator.generated';
import { configError, literalSecretIssues, referenceIssues, schemaIssues, type ConfigError, type ConfigIssue } from './issues';
import { normalise } from './normalise';
import type { RawConfig } from './raw';
import { protectReferences, restoreReferences } from './references';
import { MAX_CONFIG_VALUES, oversizedKey } from './size';
import type { Config } from './types';

export type { ConfigError, ConfigIssue } from './issues';
export { DEFAULTS, MAX_PAYLOAD_LIMIT } from './normalise';
export { resolveConfig } from './resolve';

/** The YAML document of `text`, its references protected (references.ts) and not yet restored. */
function parseYaml(text: string, malformed: boolean): Result<unknown, ConfigError> {
  const safeText = protectReferences(text, malformed);
  try {
    // js-yaml 5 refuses an empty stream; a file with no document (comments only, with LF or
    // CRLF line ends, or a bare `...`) means "all defaults".
    if (yaml.loadAll(safeText, null, { schema: yaml.CORE_SCHEMA }).length === 0) return ok({});
    return ok(yaml.load(safeText, { schema: yaml.CORE_SCHEMA }));
  } catch (error) {
    const reason = error instanceof yaml.YAMLException ? error.reason : String(error);
    const line = error instanceof yaml.YAMLException && error.mark ? ` at line ${error.mark.line + 1}` : '';
    return fail(configError([{ path: '', message: `config.yaml is not valid YAML${line}: ${reason}` }]));
  }
}

/**
 * Malformed `${…}` are swapped too, so `{ secret: ${bad-name} }` parses and is named by key.
 * A swap can break what was written (`{ url: "https://${HOST" }`: its `}` closes the mapping):
 * then the text is read as written, kept only when it shows a malformed reference (so it is
 * refused anyway); else the first YAML error is the answer.
 */
function parseDocument(text: string): Result<unknown, ConfigError> {
  const swapped = parseYaml(text, true);
  if (swapped.ok) return swapped;
  const asWritten = parseYaml(text, false);
  // An oversized document is refused as such by parseConfig, before anything walks it.
  const shows = asWritten.ok && (oversizedKey(asWritten.value) !== undefined || referenceIssues(restoreReferences(asWritten.value), '').length > 0);
  return shows ? asWritten : swapped;
}

/** Parses and validates config text. An empty file is a valid, all-defaults configuration. */
export function parseConfig(text: string): Result<Config, ConfigError> {
  const parsed = parseDocument(text);
  if (!parsed.ok) return parsed;
  let document = parsed.value;
  if (document === null || document === undefined) document = {};
  const oversized = oversizedKey(document);
  if (oversized) return fail(configError([{ path: oversized.path, message: `expands to more than ${MAX_CONFIG_VALUES} values (YAML aliases repeat what they name); write the values out` }]));
  if (typeof document !== 'object' || Array.isArray(document)) {
    return fail(configError([{ path: '', message: 'config.yaml must be a mapping of sections (webhooks, agent, delivery, aws)' }]));
  }
  const raw = restoreReferences(document) as Record<string, unknown>;
  // A malformed reference is the first thing wrong with its key: other checks do not name that key again.
  const references = referenceIssues(raw, '');
  const unnamed = (issues: ConfigIssue[]): ConfigIssue[] => {
    const named = new Set(references.map((issue) => issue.path));
    return [...references, ...issues.filter((issue) => !named.has(issue.path))];
  };
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
    return fail(configError(unnamed([...schema, ...more.filter((issue) => !named.has(issue.path)), ...secretIssues])));
  }
  const issues = [...secretIssues];
  // The schema held: the document has the type the schema describes (raw.ts).
  const config = normalise(raw as RawConfig, issues);
  const all = unnamed(issues);
  return all.length > 0 ? fail(configError(all)) : ok(config);
}
