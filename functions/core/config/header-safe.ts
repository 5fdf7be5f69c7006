/**
 * Credentials sent as HTTP request headers (`Authorization: token …`, `x-api-key`) must be
 * visible ASCII: fetch refuses anything above U+00FF before a connection is made, and a
 * space, a quote or the `…` of a copied example is never part of a real token (hunt 5 D3:
 * `GITHUB_TOKEN=github_pat_…` was retried for minutes as "GitHub could not be reached").
 * Checked when `${VAR}` references are resolved, and again by the GitHub client.
 */
import { referencedNames } from './references';

/** The keys whose values are sent as request headers. */
export const HEADER_KEYS = ['agent.api_key', 'delivery.codehost.github.token', 'delivery.codehost.gitlab.token', 'delivery.teamchat.bot_token'] as const;

function describe(code: number): string {
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  if (code === 0x20) return 'a space';
  if (code === 0x09) return 'a tab';
  if (code === 0x0a || code === 0x0d) return 'a line break';
  const char = String.fromCodePoint(code);
  // Invisible ones (no-break or zero-width spaces, controls) are named by code point only.
  return /[\p{Z}\p{C}]/u.test(char) ? `an invisible character (${hex})` : `"${char}" (${hex})`;
}

/**
 * Why `value` cannot be sent as a header: its first character outside visible ASCII and
 * where (counted from 1), never the value itself; undefined when it can.
 */
export function headerUnsafe(value: string): string | undefined {
  let position = 0;
  for (const char of value) {
    position++;
    const code = char.codePointAt(0) as number;
    if (code < 0x21 || code > 0x7e) return `${describe(code)} at character ${position}`;
  }
  return undefined;
}

/** The value at a dotted key path (`delivery.codehost.github.token`), if any. */
export function valueAt(root: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), root);
}

/** What is wrong with a credential written as `written` (its `${VAR}` references) and resolved to `value`, if anything. */
export function unsendable(written: unknown, value: unknown): string | undefined {
  if (typeof written !== 'string' || typeof value !== 'string') return undefined;
  const problem = headerUnsafe(value);
  if (!problem) return undefined;
  const names = referencedNames(written);
  const which = names.length === 1 ? `the value of \${${names[0]}}` : 'its value';
  const fix = names.length === 1 ? `set ${names[0]} to the credential itself` : 'set its variables to the credential itself';
  return `${which} has ${problem}, which cannot be sent in an HTTP header: ${fix} (no quotes, spaces or the "…" of an example)`;
}
