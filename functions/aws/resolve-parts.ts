/**
 * `${VAR}` resolution for a deployed function where one secret that is not set disables
 * only the part of the configuration that uses it (a webhook source, a delivery target,
 * the agent), not the whole function: before, one missing SSM parameter made ingest answer
 * 503 on every endpoint, /health included, and failed every worker batch. The caller
 * decides what a disabled part does (ingest: that endpoint refuses with 401, fail closed;
 * the worker: that target or the agent fails with the reason). The refresh in runtime.ts
 * picks the secret up once it is set.
 */
import type { ConfigSection, Config } from '../core/config/types';
import { resolveConfig } from '../core/config/resolve';
import { HookError } from '../core/errors';
import type { SecretSource } from '../core/ports';

/** A part of the configuration by its key path, e.g. ['delivery', 'teamchat']. */
export type ConfigPart = readonly [ConfigSection, ...string[]];

export interface ResolvedParts {
  /** The sections resolved, without the parts whose secrets are not set. */
  config: Config;
  /** Each part left out (its dotted path) → why, naming the variable and how to set it. */
  unresolved: Map<string, string>;
}

const pick = (root: unknown, path: readonly string[]): unknown => path.reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), root);

/** `root` with `path` removed (copies along the path only). */
function without(root: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  const [head, ...rest] = path as [string, ...string[]];
  if (!(head in root)) return root;
  const copy = { ...root };
  if (rest.length === 0) delete copy[head];
  else copy[head] = without(copy[head] as Record<string, unknown>, rest);
  return copy;
}

/** `root` holding only `value` at `path`. */
const only = (path: readonly string[], value: unknown): Record<string, unknown> =>
  path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;

export async function resolveParts(config: Config, source: SecretSource, sections: readonly ConfigSection[], parts: readonly ConfigPart[]): Promise<ResolvedParts> {
  // One read per variable, however many times it is resolved below.
  const read = new Map<string, Promise<string | undefined>>();
  const once: SecretSource = { get: (name) => read.get(name) ?? read.set(name, source.get(name)).get(name)!, ...(source.where ? { where: source.where.bind(source) } : {}) };
  const whole = await resolveConfig(config, once, sections);
  if (whole.ok) return { config: whole.value, unresolved: new Map() };

  const unresolved = new Map<string, string>();
  let rest = config as unknown as Record<string, unknown>;
  for (const part of parts) {
    const value = pick(config, part);
    if (value === undefined) continue;
    const alone = await resolveConfig(only(part, value) as unknown as Config, once, [part[0]]);
    if (alone.ok) continue;
    unresolved.set(part.join('.'), alone.error.issues.map((i) => `${i.path}: ${i.message}`).join('; '));
    rest = without(rest, part);
  }
  const resolved = await resolveConfig(rest as unknown as Config, once, sections);
  if (!resolved.ok) throw new HookError('config_invalid', resolved.error.message);
  return { config: resolved.value, unresolved };
}
