/**
 * Packaging: config.yaml must parse and fit AWS's limits. What passes is written for the
 * functions as the prepared configuration (functions/core/config/prepared.ts), and the
 * skills as prepared skills (functions/core/skills/prepared.ts), so neither function
 * parses YAML on a cold start.
 */
import { readConfigFile } from '../functions/core/config/file';
import { preparedConfigText } from '../functions/core/config/prepared';
import { awsLimitIssues } from '../functions/aws/limits';
import { SkillLibrary } from '../functions/core/skills/library';
import { preparedSkillEntries, preparedSkillsText } from '../functions/core/skills/prepared';

/** The prepared configuration's text, or the problems that stop packaging. */
export function prepareForAws(configDir: string): { problems: string } | { prepared: string } {
  const parsed = readConfigFile(configDir);
  if (!parsed.ok) return { problems: parsed.error.message };
  const issues = awsLimitIssues(parsed.value);
  if (issues.length > 0) return { problems: `Invalid configuration for AWS:\n  ${issues.map((i) => `${i.path}: ${i.message}`).join('\n  ')}` };
  return { prepared: preparedConfigText(parsed.value) };
}

/** The prepared skills' text (built-in and `{configDir}/skills`), and the skills that will be refused if a subscription uses them. */
export function prepareSkills(configDir: string): { prepared: string; invalid: string[] } {
  const entries = preparedSkillEntries(new SkillLibrary(configDir));
  return { prepared: preparedSkillsText(entries), invalid: Object.values(entries).flatMap((entry) => ('error' in entry ? [entry.error.message] : [])) };
}
