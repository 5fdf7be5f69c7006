/** The built-in skills, embedded as text so the Lambda bundle and the CLI carry them. */
import alertTriage from '../../skills/alert-triage/SKILL.md';
import codeReview from '../../skills/code-review/SKILL.md';
import issueTriage from '../../skills/issue-triage/SKILL.md';

export const BUILTIN_SKILL_TEXTS: Readonly<Record<string, string>> = {
  'alert-triage': alertTriage,
  'code-review': codeReview,
  'issue-triage': issueTriage,
};
