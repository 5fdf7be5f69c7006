/**
 * Format rules with no dependencies, apart from formats.ts: the worker checks resolved URL
 * keys (url-keys.ts) and reports config issues (issues.ts), and must not bundle what
 * formats.ts needs for CIDR lists (ipaddr.js) and sizes.
 */
export const SIZE_FORMAT = 'a size such as 1MB, 512KB, 2MiB or a number of bytes';
export const DURATION_FORMAT = 'a duration such as 10s, 2m, 500ms or a number of seconds';

/** Whether a value is an http(s) URL. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
