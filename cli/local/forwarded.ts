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
import { isIP } from 'node:net';

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
  return addressOf(entries[entries.length - hops] ?? '');
}

/**
 * An X-Forwarded-For entry as an IP address (some proxies append `ip:port` or `[v6]:port`);
 * anything else is not an address a proxy wrote, and is not taken (the peer is used).
 */
function addressOf(entry: string): string | undefined {
  if (isIP(entry)) return entry;
  const withPort = /^(?:\[([0-9A-Fa-f:.]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):\d{1,5}$/.exec(entry);
  const address = withPort?.[1] ?? withPort?.[2];
  return address && isIP(address) ? address : undefined;
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
