/** Packaging check: config.yaml must parse and fit AWS's limits; returns the problems, if any. */
import { readConfigFile } from '../functions/core/config/file';
import { awsLimitIssues } from '../functions/aws/limits';

export function checkForAws(configDir: string): string | undefined {
  const parsed = readConfigFile(configDir);
  if (!parsed.ok) return parsed.error.message;
  const issues = awsLimitIssues(parsed.value);
  if (issues.length === 0) return undefined;
  return `Invalid configuration for AWS:\n  ${issues.map((i) => `${i.path}: ${i.message}`).join('\n  ')}`;
}
