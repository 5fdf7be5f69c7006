/** `${VAR}` references → values, through a SecretSource (the environment, SSM on AWS). */
import { fail, ok, type Result } from '../errors';
import type { SecretSource } from '../ports';
import { configError, join, type ConfigError, type ConfigIssue } from './issues';
import { referencedNames, substitute } from './references';
import type { Config, ConfigSection } from './types';
import { HEADER_KEYS, unsendable, valueAt } from './header-safe';
import { checkResolvedUrls } from './url-keys';

/**
 * Replaces every `${VAR}` in the given sections with its value from `source`. A reference
 * to a variable that is not set is an error naming it and the key that uses it; so is a
 * value a header cannot carry (header-safe.ts) or a URL key's value that is no URL (url-keys.ts).
 */
export async function resolveConfig(
  config: Config,
  source: SecretSource,
  sections: readonly ConfigSection[] = ['webhooks', 'agent', 'delivery', 'aws'],
): Promise<Result<Config, ConfigError>> {
  const uses = new Map<string, string[]>();
  const collect = (value: unknown, path: string): void => {
    if (typeof value === 'string') {
      for (const name of referencedNames(value)) uses.set(name, [...(uses.get(name) ?? []), path]);
    } else if (Array.isArray(value)) {
      // A scalar secret is normalised to a one-entry list: name the key as the user wrote it.
      value.forEach((item, i) => collect(item, value.length === 1 ? path : `${path}[${i}]`));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) collect(item, join(path, key));
    }
  };
  for (const name of sections) collect(config[name], name);

  const values = new Map<string, string>();
  const issues: ConfigIssue[] = [];
  await Promise.all([...uses.keys()].map(async (name) => {
    const value = await source.get(name);
    if (value === undefined || value === '') {
      issues.push({ path: (uses.get(name) ?? [])[0] ?? '', message: `references \${${name}}, which is not set; set the environment variable ${name}${source.where ? ` (${source.where(name)})` : ''}` });
    } else {
      values.set(name, value);
    }
  }));
  if (issues.length > 0) return fail(configError(issues.sort((a, b) => a.path.localeCompare(b.path))));

  const replace = (value: unknown): unknown => {
    if (typeof value === 'string') return substitute(value, values);
    if (Array.isArray(value)) return value.map(replace);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replace(v)]));
    }
    return value;
  };
  const resolved = { ...config };
  for (const name of sections) {
    if (config[name] !== undefined) (resolved as Record<string, unknown>)[name] = replace(config[name]);
  }
  const problems = [...headerIssues(config, resolved, sections), ...checkResolvedUrls(config, resolved, sections)];
  return problems.length > 0 ? fail(configError(problems)) : ok(resolved);
}

/** Credentials that no HTTP header can carry, named by key and variable (their values are never shown). */
function headerIssues(config: Config, resolved: Config, sections: readonly ConfigSection[]): ConfigIssue[] {
  return HEADER_KEYS.flatMap((path) => {
    if (!sections.includes(path.split('.')[0] as ConfigSection)) return [];
    const message = unsendable(valueAt(config, path), valueAt(resolved, path));
    return message ? [{ path, message }] : [];
  });
}
