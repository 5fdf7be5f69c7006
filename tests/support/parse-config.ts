/** config.yaml text parsed for a test: the config it gives, or the error it is refused with. */
import { parseConfig, type ConfigError } from '../../functions/core/config/load';
import type { Config } from '../../functions/core/config/types';

export function valid(text: string): Config {
  const result = parseConfig(text);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

export function invalid(text: string): ConfigError {
  const result = parseConfig(text);
  if (result.ok) throw new Error('expected a configuration error');
  return result.error;
}
