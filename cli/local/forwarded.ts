/**
 * Request details `hookagent serve` takes from the wire: the client address behind trusted
 * proxies, and the request target.
 *
 * Each proxy appends the address it received the request from to `X-Forwarded-For`, so
 * everything left of the entries written by our own proxies is whatever the client sent.
 * With N trusted proxies in front of serve, the client is the Nth entry from the right.
 * A header with fewer entries than that did not pass through all of them: the socket's
 * peer is used (fail closed), never an entry the client could have written.
 */

/** `--trust-proxy` / `--trusted-proxies N` as a number of trusted hops (0 = ignore the header). */
export function trustedHops(trustProxy: boolean | number | undefined): number {
  if (trustProxy === true) return 1;
  if (typeof trustProxy === 'number' && Number.isInteger(trustProxy) && trustProxy > 0) return trustProxy;
  return 0;
}

/** The Nth address from the right of X-Forwarded-For (repeated headers arrive joined by commas). */
export function forwardedClient(header: string | string[] | undefined, hops: number): string | undefined {
  if (hops < 1 || header === undefined) return undefined;
  const entries = ([] as string[]).concat(header).join(',').split(',').map((entry) => entry.trim());
  if (entries.length < hops) return undefined;
  const entry = entries[entries.length - hops];
  return entry ? entry : undefined;
}

/**
 * The request target as a URL, or undefined when it cannot be parsed (an absolute form such
 * as `http://[/x`, a port over 65535): such a request is the client's fault.
 */
export function parseRequestTarget(target: string | undefined): URL | undefined {
  try {
    return new URL(target ?? '/', 'http://localhost');
  } catch {
    return undefined;
  }
}

/** Validates `--trusted-proxies`: a whole number from 1 to 32. */
export function checkTrustedProxies(value: unknown): number | undefined {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 && n <= 32 ? n : undefined;
}
