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

/** A CIDR range or a bare address (meaning /32 or /128), normalised; undefined when invalid. */
export function parseCidr(value: string): string | undefined {
  const [addressText = '', bitsText, ...rest] = value.trim().split('/');
  if (rest.length > 0) return undefined;
  // Strict forms only: ipaddr.parse also takes "10.1" or octal parts, which are typos here.
  const isV4 = ipaddr.IPv4.isValidFourPartDecimal(addressText);
  if (!isV4 && !ipaddr.IPv6.isValid(addressText)) return undefined;
  const address = ipaddr.parse(addressText);
  const maxBits = isV4 ? 32 : 128;
  if (bitsText === undefined) return `${address.toString()}/${maxBits}`;
  if (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > maxBits) return undefined;
  return `${address.toString()}/${Number(bitsText)}`;
}


