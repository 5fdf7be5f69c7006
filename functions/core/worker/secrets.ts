/** The configuration's secret values, found once per configuration object: masked wherever a worker's text may carry one. */
import { secretValuesOf } from '../redact';

const secretCache = new WeakMap<object, string[]>();
export function secretsOf(config: object): string[] {
  let found = secretCache.get(config);
  if (!found) secretCache.set(config, (found = secretValuesOf(config)));
  return found;
}
