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

/**
 * Whether an http(s) URL holds a user name or password (`user:password@host`). fetch refuses
 * to build a request from one, and its error repeats the URL, password included: such a key
 * is refused when the configuration loads, by key and without its value.
 */
export function hasUrlCredentials(value: string): boolean {
  try {
    const url = new URL(value);
    return url.username !== '' || url.password !== '';
  } catch {
    return false;
  }
}

export const URL_CREDENTIALS = 'must not hold a user name or password (user:password@): no request can be made to such a URL, and it would be shown wherever the URL is; give credentials in their own key (api_key, token) or the environment';
