/**
 * The local `status` on a config.yaml that does not validate: serve keeps running on the
 * configuration it loaded (it refused the edit), and status still reports it, with the
 * errors (hunt 11 D2), instead of failing as every other command does.
 */
import { readFileSync } from 'node:fs';
import { configPath } from '../../functions/core/config/file';
import { parseConfig, type ConfigError } from '../../functions/core/config/load';
import type { Config } from '../../functions/core/config/types';
import { HookError } from '../../functions/core/errors';

/** A top-level `aws:` key (read as text: the file does not validate): the user's status is a deployment's. */
function namesAwsSection(dir: string): boolean {
  try {
    return /^aws\s*:/m.test(readFileSync(configPath(dir), 'utf8'));
  } catch {
    return false;
  }
}

/**
 * What the local status reads beside config.yaml's `error`: every default (an empty
 * config.yaml), and the errors on one line. Undefined for a deployment's status (--stage, an
 * `aws` section), which needs the file.
 */
export function keptInvalidConfig(dir: string, error: ConfigError, stage: string | undefined): { config: Config; invalidConfig: string } | undefined {
  if (stage !== undefined || namesAwsSection(dir)) return undefined;
  const defaults = parseConfig('');
  if (!defaults.ok) throw new HookError('config_invalid', defaults.error.message);
  return { config: defaults.value, invalidConfig: error.issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ') };
}
