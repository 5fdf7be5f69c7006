/**
 * URL keys written with `${VAR}` references are checked once resolved, by the rule
 * normalise.ts applies to inline ones (an http(s) URL, trailing slashes trimmed): hunt 9 D3,
 * where `public_url: ${PUB}` with PUB=example.com was printed to senders as is, and a Slack
 * webhook URL without its scheme failed every delivery. The message names the key and the
 * variable, never the value: a webhook URL is a secret.
 */
import { hasUrlCredentials, isHttpUrl, URL_CREDENTIALS } from './format-rules';
import { valueAt } from './header-safe';
import type { ConfigIssue } from './issues';
import { referencedNames } from './references';
import type { Config, ConfigSection } from './types';

export const URL_EXAMPLE = 'https://example.com';

/** The URL keys; `trim`: normalise.ts trims their trailing slashes (a webhook URL is used as given). */
const URL_KEYS: ReadonlyArray<{ path: string; trim: boolean }> = [
  { path: 'webhooks.public_url', trim: true },
  { path: 'agent.base_url', trim: true },
  { path: 'delivery.codehost.github.api_url', trim: true },
  { path: 'delivery.codehost.gitlab.api_url', trim: true },
  { path: 'delivery.teamchat.api_url', trim: true },
  { path: 'delivery.teamchat.webhook_url', trim: false },
  { path: 'delivery.messenger.api_url', trim: true },
];

export const trimUrl = (value: string): string => value.replace(/\/+$/, '');

/** What is wrong with a URL written as `written` (with references) and resolved to `value`, if anything. */
export function resolvedUrlProblem(written: unknown, value: unknown): string | undefined {
  if (typeof written !== 'string' || typeof value !== 'string') return undefined;
  const names = referencedNames(written);
  if (names.length === 0) return undefined;
  // Said by key, never with the value: the password is in it.
  if (isHttpUrl(value) && hasUrlCredentials(value)) return `${URL_CREDENTIALS} (it comes from ${names.map((name) => `\${${name}}`).join(', ')})`;
  if (isHttpUrl(value)) return undefined;
  if (names.length === 1 && written === `\${${names[0]}}`) {
    return `the value of \${${names[0]}} is not an http(s) URL: set ${names[0]} to a whole URL with its scheme, e.g. ${URL_EXAMPLE}`;
  }
  const refs = names.map((name) => `\${${name}}`).join(', ');
  return `is not an http(s) URL once ${refs} ${names.length === 1 ? 'is' : 'are'} filled in (e.g. ${URL_EXAMPLE}): check the value of ${names.join(', ')}`;
}

/**
 * Checks the URL keys of `sections` in `resolved` (written as in `written`), trimming those
 * normalise.ts trims, in place: `resolved`'s sections are the resolver's own copies.
 */
export function checkResolvedUrls(written: Config, resolved: Config, sections: readonly ConfigSection[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const { path, trim } of URL_KEYS) {
    if (!sections.includes(path.split('.')[0] as ConfigSection)) continue;
    const before = valueAt(written, path);
    const value = valueAt(resolved, path);
    const problem = resolvedUrlProblem(before, value);
    if (problem) issues.push({ path, message: problem });
    else if (trim && typeof value === 'string' && typeof before === 'string' && referencedNames(before).length > 0) {
      const dot = path.lastIndexOf('.');
      (valueAt(resolved, path.slice(0, dot)) as Record<string, unknown>)[path.slice(dot + 1)] = trimUrl(value);
    }
  }
  return issues;
}
