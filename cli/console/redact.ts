/**
 * What the console may show: nothing secret ever leaves the process. Values under
 * secret-like keys are masked, and every known secret value (subscription secrets, the
 * configuration's tokens and webhook secrets) is replaced wherever it appears.
 */
import { isSecretKey, MASK, redactSecrets, secretValuesOf } from '../../functions/core/redact';

export { isSecretKey, MASK, secretValuesOf };

/** A deep copy with secret-key values masked and known secret values cut out of every string. */
export function scrub<T>(value: T, secrets: readonly string[]): T {
  const clean = (v: unknown, masked: boolean): unknown => {
    if (typeof v === 'string') return masked && v !== '' ? MASK : redactSecrets(v, secrets);
    if (Array.isArray(v)) return v.map((item) => clean(item, masked));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, clean(item, masked || isSecretKey(k))]));
    return v;
  };
  return clean(value, false) as T;
}
