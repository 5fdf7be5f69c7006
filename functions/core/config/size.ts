/**
 * Bounds on config.yaml, so a small hostile file cannot exhaust memory or time: the file
 * is read up to MAX_CONFIG_BYTES, and the parsed document may expand to at most
 * MAX_CONFIG_VALUES values. YAML aliases (`*name`) make js-yaml return the same object
 * at each use, so a 300-byte "billion laughs" document parses fast but everything that
 * walks it afterwards (reference substitution, schema validation) visits every repeat.
 * The check counts each value once per place it is used, with the count of a shared
 * node memoised: linear in the document's distinct nodes.
 */
export const MAX_CONFIG_BYTES = 1024 * 1024;
export const MAX_CONFIG_VALUES = 10_000;

export interface OversizedKey {
  /** Dotted key path where the expansion happens (array indices are not followed). */
  path: string;
  values: number;
}

/** Where the document expands past `limit` values, or undefined when it stays within it. */
export function oversizedKey(document: unknown, limit = MAX_CONFIG_VALUES): OversizedKey | undefined {
  const sizes = new Map<object, number>();
  const visiting = new Set<object>();
  // Counts are floats: a deep bomb's count may pass 2^53 or reach Infinity, still above the limit.
  const size = (value: unknown): number => {
    if (value === null || typeof value !== 'object') return 1;
    const known = sizes.get(value);
    if (known !== undefined) return known;
    if (visiting.has(value)) return Infinity; // a cycle never ends
    visiting.add(value);
    let total = 1;
    for (const child of Object.values(value)) total += size(child);
    visiting.delete(value);
    sizes.set(value, total);
    return total;
  };
  const values = size(document);
  if (values <= limit) return undefined;
  // Walk down the mapping keys that are over the limit, largest first.
  let path = '';
  let node: unknown = document;
  const walked = new Set<object>();
  for (;;) {
    if (node === null || typeof node !== 'object' || Array.isArray(node) || walked.has(node)) break;
    walked.add(node);
    const [key, child] = Object.entries(node).reduce<[string, unknown, number] | undefined>((best, [k, v]) => {
      const s = size(v);
      return best === undefined || s > best[2] ? [k, v, s] : best;
    }, undefined) ?? [];
    if (key === undefined || size(child) <= limit) break;
    path = path ? `${path}.${key}` : key;
    node = child;
  }
  return { path, values };
}
