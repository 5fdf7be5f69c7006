/**
 * Secret values kept out of text that leaves the process (DESIGN §3: "Secrets never
 * appear in logs, responses, CLI output"). A provider or target that echoes a credential
 * in its error ("invalid x-api-key: sk-…") would otherwise carry it into the event log,
 * the dead-letter reason, the service log and the CLI.
 */
export const MASK = '••••••';

/** Keys whose values are secrets whatever they hold. */
const SECRET_KEY = /secret|token|passw|authorization|signature|api[-_]?key|private[-_]?key|cookie|credential|webhook[-_]?url/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Every string under a secret-like key of a (resolved) configuration. Short values (< 4) are no secrets worth matching. */
export function secretValuesOf(value: unknown, underSecretKey = false, out: string[] = []): string[] {
  if (typeof value === 'string') {
    if (underSecretKey && value.length >= 4) out.push(value, ...secretPartsOfUrl(value));
  } else if (Array.isArray(value)) {
    for (const item of value) secretValuesOf(item, underSecretKey, out);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) secretValuesOf(item, underSecretKey || isSecretKey(key), out);
  }
  return out;
}

/**
 * A secret URL (a Slack incoming webhook) is secret by its path: an error that quotes only the
 * path (`no route for POST /services/T…/B…/…`) must not carry it either.
 */
function secretPartsOfUrl(value: string): string[] {
  if (!/^https?:\/\//i.test(value)) return [];
  try {
    const url = new URL(value);
    const path = `${url.pathname}${url.search}`;
    return path.length >= 8 ? [path] : [];
  } catch {
    return [];
  }
}

/** RFC 3986's reserved characters (gen-delims and sub-delims). */
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/g;
const percent = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
const tryEncode = (encode: (value: string) => string, value: string) => {
  try {
    return encode(value);
  } catch {
    // A lone surrogate: no URL carries it encoded.
    return value;
  }
};

/** Each secret's forms, found once: a worker masks with the same few secrets all along. */
const formsCache = new Map<string, readonly string[]>();

/**
 * A secret and the forms a URL quoted back carries it in (a gateway or an API echoing the
 * request path): percent-encoded as encodeURIComponent writes it (a Telegram token's `:` as
 * `%3A`), with only the reserved characters encoded (a gateway re-encoding a path segment;
 * Python's `quote(safe='')`), as encodeURI writes it (spaces, non-ASCII), and each with
 * lower-case hex (.NET). Not base64: no target or provider quotes a credential so, and
 * hookagent sends none that way.
 */
function formsOf(secret: string): readonly string[] {
  let forms = formsCache.get(secret);
  if (!forms) {
    const encoded = [tryEncode(encodeURIComponent, secret), secret.replace(RESERVED, percent), tryEncode(encodeURI, secret)];
    forms = [...new Set([secret, ...encoded, ...encoded.map((form) => form.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()))])];
    if (formsCache.size >= 1000) formsCache.clear();
    formsCache.set(secret, forms);
  }
  return forms;
}

/** Every form of each secret of at least `minLength` characters, longest first. */
function knownForms(secrets: readonly (string | undefined)[], minLength: number): string[] {
  const known = new Set<string>();
  for (const secret of secrets) if (typeof secret === 'string' && secret.length >= minLength) for (const form of formsOf(secret)) known.add(form);
  return [...known].sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of each secret, in each of its forms (longest first), replaced by the mask. */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  return knownForms(secrets, 4).reduce((out, secret) => (out.includes(secret) ? out.split(secret).join(MASK) : out), text);
}

/**
 * `text` masked, then cut to its first `max` characters: a secret is masked whole before the
 * cut, which could otherwise split it out of reach of redactSecrets. A cut (this one, or one
 * before: `cut`, such as a capped read) can still leave the start of a secret at the end:
 * a tail of 4+ characters that begins one is masked too.
 */
export function redactExcerpt(text: string, secrets: readonly (string | undefined)[], max = Infinity, cut = false): string {
  const masked = redactSecrets(text, secrets);
  const excerpt = masked.slice(0, max);
  return cut || excerpt.length < masked.length ? maskSecretStart(excerpt, secrets) : excerpt;
}

/** `text` with its longest tail of 4+ characters that begins a secret (and is shorter than it) masked. */
function maskSecretStart(text: string, secrets: readonly (string | undefined)[]): string {
  const known = knownForms(secrets, 5);
  const longest = Math.min(text.length, Math.max(0, ...known.map((s) => s.length - 1)));
  for (let size = longest; size >= 4; size--) {
    const tail = text.slice(-size);
    if (known.some((secret) => secret.length > size && secret.startsWith(tail))) return `${text.slice(0, -size)}${MASK}`;
  }
  return text;
}
