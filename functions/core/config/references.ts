/**
 * `${VAR_NAME}` references. YAML treats `{` as a flow indicator, so `{ secret: ${X} }`
 * would not parse: each `${…}` closed on its line is swapped for a YAML-safe token before
 * parsing and restored after, which lets us tell a reference from an inline literal.
 * Nothing is refused at the text stage: a `${…}` in a comment goes with the comment, and
 * one in a key or value is checked on the parsed document (`badReferences`), where its
 * key path is known.
 */
// A good name is kept readable; any other text travels hex-encoded ([0-9a-f] is YAML-safe everywhere).
const TOKEN = /__HOOKAGENT_(?:REF_([A-Za-z_][A-Za-z0-9_]*?)|BAD_([0-9a-f]*))_FER__/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const WHOLE_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
// From a `${` to its `}` or to the end of its line; sticky, so a scan stays linear in the text.
const AT_REFERENCE = /\$\{([^}\n]*)(\})?/y;
const SHOWN = 60;

interface Found {
  start: number;
  end: number;
  name: string;
  closed: boolean;
}

/** Every `${` of `text` with what follows it (one after another: a `${` inside one is part of it). */
function* scan(text: string): Generator<Found> {
  for (let at = text.indexOf('${'); at !== -1; at = text.indexOf('${', at)) {
    AT_REFERENCE.lastIndex = at;
    const match = AT_REFERENCE.exec(text) as RegExpExecArray;
    const start = at;
    at += match[0].length;
    yield { start, end: at, name: match[1] as string, closed: match[2] !== undefined };
  }
}

/**
 * Replaces each `${…}` closed on its line by a token: a good name always, any other text
 * unless `malformed` is false (then YAML reads it as written).
 */
export function protectReferences(text: string, malformed = true): string {
  let out = '';
  let last = 0;
  for (const found of scan(text)) {
    if (!found.closed || (!malformed && !NAME.test(found.name))) continue;
    const written = text.slice(found.start, found.end);
    const token = NAME.test(found.name) ? `__HOOKAGENT_REF_${found.name}_FER__` : `__HOOKAGENT_BAD_${Buffer.from(written, 'utf8').toString('hex')}_FER__`;
    out += text.slice(last, found.start) + token;
    last = found.end;
  }
  return out + text.slice(last);
}

function restore(text: string): string {
  return text.replace(TOKEN, (_m, name: string | undefined, hex: string | undefined) => (name !== undefined ? `\${${name}}` : Buffer.from(hex ?? '', 'hex').toString('utf8')));
}

/** Turns tokens back into what was written, in every key and string of a parsed document. */
export function restoreReferences(value: unknown): unknown {
  if (typeof value === 'string') return restore(value);
  if (Array.isArray(value)) return value.map(restoreReferences);
  if (value !== null && typeof value === 'object') {
    // fromEntries defines own keys, so a `__proto__` key stays a key.
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [restore(key), restoreReferences(item)]));
  }
  return value;
}

export interface BadReference {
  /** What was written, from `${` to its `}` (or to the end of its line), cut short. */
  text: string;
  closed: boolean;
}

/** Every `${` in `value` that does not start a `${NAME}` reference: `${` always starts one. */
export function badReferences(value: string): BadReference[] {
  const bad: BadReference[] = [];
  for (const found of scan(value)) {
    if (found.closed && NAME.test(found.name)) continue;
    const written = value.slice(found.start, found.end);
    bad.push({ text: written.length > SHOWN ? `${written.slice(0, SHOWN)}…` : written, closed: found.closed });
  }
  return bad;
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
