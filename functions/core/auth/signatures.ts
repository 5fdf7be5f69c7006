/**
 * Webhook authentication schemes (DESIGN §2.2). Everything works on the raw body bytes,
 * compares in constant time and accepts any secret of a rotation list.
 */
import { createHmac, createHash, timingSafeEqual } from 'node:crypto';

/** Standard Webhooks timestamps may be this far from now, either way. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

export type Headers = Readonly<Record<string, string | undefined>>;

/**
 * The body as received: bytes, or the text API Gateway already decoded from UTF-8 (then
 * HMACs hash its UTF-8 encoding, the bytes the sender signed, without another copy).
 */
export type RawBody = Buffer | string;

function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Equal-length digests, so neither the length nor the content of a token leaks. */
function tokensEqual(presented: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(expected)) && presented.length === expected.length;
}

/** `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>` (GitHub, and custom senders). */
export function verifyHubSignature(body: RawBody, header: string | undefined, secrets: readonly string[]): boolean {
  if (!header || secrets.length === 0) return false;
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!match) return false;
  const presented = Buffer.from(match[1] as string, 'hex');
  return secrets.some((secret) => safeEqual(createHmac('sha256', secret).update(body).digest(), presented));
}

/** A shared token compared whole: GitLab's `X-Gitlab-Token`, or `Authorization: Bearer`. */
export function verifyToken(presented: string | undefined, secrets: readonly string[]): boolean {
  if (!presented || secrets.length === 0) return false;
  // Check every secret so the time taken does not depend on which one matched.
  return secrets.map((secret) => tokensEqual(presented, secret)).some(Boolean);
}

export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}

/**
 * The HMAC key of a Standard Webhooks secret: `whsec_<base64>` decodes to its bytes
 * (as the spec and GitLab signed webhooks use it); any other secret is used as UTF-8.
 */
export function standardWebhooksKey(secret: string): Buffer {
  if (secret.startsWith('whsec_')) return Buffer.from(secret.slice('whsec_'.length), 'base64');
  return Buffer.from(secret, 'utf8');
}

export type StandardWebhooksOutcome = 'valid' | 'missing' | 'invalid' | 'stale';

/**
 * Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256(key, id.timestamp.body)>`,
 * possibly several space-separated signatures (any valid one is enough), and a
 * `webhook-timestamp` within ±5 minutes of now. The timestamp is read only once a
 * signature over it verifies (`stale`): an unverified one says nothing, so a signature
 * that does not verify is `invalid` whatever its timestamp, and the endpoint's other
 * schemes (X-Gitlab-Token beside a signing token hookagent was not given) still decide.
 */
export function verifyStandardWebhooks(
  body: RawBody,
  headers: Headers,
  secrets: readonly string[],
  nowMs: number,
): StandardWebhooksOutcome {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) return 'missing';
  if (secrets.length === 0) return 'invalid';
  if (!/^\d{1,12}$/.test(timestamp.trim())) return 'invalid';
  const presented = signatures
    .split(' ')
    .map((part) => part.trim())
    .filter((part) => part.startsWith('v1,'))
    .map((part) => Buffer.from(part.slice(3), 'base64'));
  if (presented.length === 0) return 'invalid';
  const signedPrefix = Buffer.from(`${id}.${timestamp.trim()}.`, 'utf8');
  const valid = secrets.some((secret) => {
    const expected = createHmac('sha256', standardWebhooksKey(secret)).update(signedPrefix).update(body).digest();
    return presented.some((candidate) => safeEqual(expected, candidate));
  });
  if (!valid) return 'invalid';
  return Math.abs(Math.floor(nowMs / 1000) - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS ? 'stale' : 'valid';
}

/** Signs like a Standard Webhooks sender (used by `webhook test --send` and by tests). */
export function signStandardWebhooks(body: string | Buffer, secret: string, id: string, timestampSeconds: number): string {
  const mac = createHmac('sha256', standardWebhooksKey(secret)).update(`${id}.${timestampSeconds}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** Signs like GitHub (used by `webhook test --send` and by tests). */
export function signHub(body: string | Buffer, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * Hex HMAC-SHA256 of the body in a vendor header: PagerDuty's `X-PagerDuty-Signature:
 * v1=<hex>,v1=<hex>` (several during rotation) and Grafana's `X-Grafana-Alerting-Signature:
 * <hex>` (configured without a timestamp header).
 */
export function verifyHexHmacList(body: RawBody, header: string | undefined, secrets: readonly string[], prefix: string): boolean {
  if (!header || secrets.length === 0) return false;
  const presented = header
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.startsWith(prefix) && /^[0-9a-fA-F]{64}$/.test(part.slice(prefix.length)))
    .map((part) => Buffer.from(part.slice(prefix.length), 'hex'));
  if (presented.length === 0) return false;
  return secrets.some((secret) => {
    const expected = createHmac('sha256', secret).update(body).digest();
    return presented.some((candidate) => safeEqual(expected, candidate));
  });
}

/** `Authorization: Basic base64(user:password)`: the password is the secret, any user name. */
export function basicPassword(authorization: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : undefined;
}
