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

/** `text` with every occurrence of each secret (longest first) replaced by the mask. */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  const known = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4))].sort((a, b) => b.length - a.length);
  return known.reduce((out, secret) => (out.includes(secret) ? out.split(secret).join(MASK) : out), text);
}
