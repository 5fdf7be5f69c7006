/** Value formats of config.yaml that a JSON Schema cannot express. */
import bytes from 'bytes';
import ipaddr from 'ipaddr.js';

/** How sizes and durations are written (for the messages that refuse one), and what a URL is. */
export { DURATION_FORMAT, isHttpUrl, SIZE_FORMAT } from './format-rules';

/** `1MB` = 1,048,576 bytes; `512KB`, `2MiB`, `1048576` (plain bytes). */
export function parseSize(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return parseSize(Number(text));
  const match = /^(\d+(?:\.\d+)?)\s*([KMGT])i?B$/i.exec(text);
  if (!match) return undefined;
  const parsed = bytes.parse(`${match[1]}${(match[2] as string).toUpperCase()}B`);
  return parsed !== null && parsed > 0 ? Math.floor(parsed) : undefined;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `120s`, `2m`, `500ms`, `1h`, or a plain number of seconds; returns milliseconds. */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') {
    // Rounded to whole milliseconds, as the string form is.
    const ms = Math.round(value * 1000);
    return Number.isFinite(ms) && ms > 0 ? ms : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(value.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * (DURATION_UNITS[match[2] ?? 's'] as number);
  return ms > 0 ? Math.round(ms) : undefined;
}

/**
 * A CIDR range or a bare address (meaning /32 or /128), normalised; undefined when invalid.
 * An IPv4-mapped entry (`::ffff:127.0.0.1`, `::ffff:140.82.112.0/116`), the form a
 * dual-stack socket reports IPv4 senders in, is written as the IPv4 range it maps, since
 * allowlist matching takes mapped senders as IPv4; one shorter than /96 maps no IPv4 range
 * and is refused.
 */
export function parseCidr(value: string): string | undefined {
  const [addressText = '', bitsText, ...rest] = value.trim().split('/');
  if (rest.length > 0) return undefined;
  // Strict forms only: ipaddr.parse also takes "10.1" or octal parts, which are typos here.
  const isV4 = ipaddr.IPv4.isValidFourPartDecimal(addressText);
  if (!isV4 && !ipaddr.IPv6.isValid(addressText)) return undefined;
  const address = ipaddr.parse(addressText);
  const maxBits = isV4 ? 32 : 128;
  if (bitsText !== undefined && (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > maxBits)) return undefined;
  const bits = bitsText === undefined ? maxBits : Number(bitsText);
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress()) return bits >= 96 ? `${address.toIPv4Address().toString()}/${bits - 96}` : undefined;
  return `${address.toString()}/${bits}`;
}


