/**
 * `${VAR_NAME}` references. YAML treats `{` as a flow indicator, so `{ secret: ${X} }`
 * would not parse: references are swapped for a YAML-safe token before parsing and
 * restored after, which lets us tell a reference from an inline literal.
 */
const REFERENCE = /\$\{([^}]*)\}/g;
const TOKEN = /__HOOKAGENT_REF_([A-Za-z_][A-Za-z0-9_]*?)_FER__/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const WHOLE_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

export interface BadReference {
  line: number;
  text: string;
}

/** Replaces each `${NAME}` by a token; names that are not identifiers are reported. */
export function protectReferences(text: string): { text: string; bad: BadReference[] } {
  const bad: BadReference[] = [];
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const protectedText = text.replace(REFERENCE, (match, name: string, offset: number) => {
    if (NAME.test(name)) return `__HOOKAGENT_REF_${name}_FER__`;
    const line = lineStarts.filter((start) => start <= offset).length;
    bad.push({ line, text: match });
    return match;
  });
  return { text: protectedText, bad };
}

/** Turns tokens back into `${NAME}` in every string of a parsed document. */
export function restoreReferences(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(TOKEN, (_m, name: string) => `\${${name}}`);
  if (Array.isArray(value)) return value.map(restoreReferences);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = restoreReferences(item);
    return out;
  }
  return value;
}

/** Whether `name` can be written as a `${NAME}` reference (and so stored as a secret). */
export function isVariableName(name: string): boolean {
  return NAME.test(name);
}

/** The variable name when `value` is exactly one reference. */
export function referenceName(value: string): string | undefined {
  return WHOLE_REFERENCE.exec(value)?.[1];
}

/** Every variable referenced in a string. */
export function referencedNames(value: string): string[] {
  return [...value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] as string);
}

export function substitute(value: string, values: ReadonlyMap<string, string>): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (match, name: string) => values.get(name) ?? match);
}
