/**
 * What the console may show: nothing secret ever leaves the process. Values under
 * secret-like keys are masked, and every known secret value (subscription secrets, the
 * configuration's tokens and webhook secrets) is replaced wherever it appears.
 */
export const MASK = '••••••';

/** Keys whose values are secrets whatever they hold. */
const SECRET_KEY = /secret|token|passw|authorization|signature|api[-_]?key|private[-_]?key|cookie|credential/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Every string under a secret-like key of a (resolved) configuration, for `scrub`. */
export function secretValuesOf(value: unknown, underSecretKey = false, out: string[] = []): string[] {
  if (typeof value === 'string') {
    if (underSecretKey && value.length >= 4) out.push(value);
  } else if (Array.isArray(value)) {
    for (const item of value) secretValuesOf(item, underSecretKey, out);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) secretValuesOf(item, underSecretKey || isSecretKey(key), out);
  }
  return out;
}

/** A deep copy with secret-key values masked and known secret values cut out of every string. */
export function scrub<T>(value: T, secrets: readonly string[]): T {
  const known = [...new Set(secrets.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  const clean = (v: unknown, masked: boolean): unknown => {
    if (typeof v === 'string') return masked && v !== '' ? MASK : known.reduce((s, secret) => (s.includes(secret) ? s.split(secret).join(MASK) : s), v);
    if (Array.isArray(v)) return v.map((item) => clean(item, masked));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, clean(item, masked || isSecretKey(k))]));
    return v;
  };
  return clean(value, false) as T;
}
