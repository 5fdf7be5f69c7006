/**
 * `http_get`: a read-only tool limited to the URL prefixes the operator lists in
 * `agent.http.allow`. GET only; the URL (after the URL parser resolves dot segments and
 * percent-encoded dots) must start with an allowed prefix at a path boundary; redirects are
 * followed by hand, at most 3, and only while they stay under an allowed prefix; the body is
 * read up to `max_bytes` and the whole call bounded by `timeout`. The headers of the
 * matching prefix (e.g. `Authorization: Bearer ${PROM_TOKEN}`) go only to URLs under it,
 * and never come back: a target that echoes them (a debug endpoint, an error page quoting
 * the token) has them masked in the result and the error, so they reach neither the model
 * provider nor the transcript.
 */
import type { Config } from '../config/types';
import { HookError, isHookError } from '../errors';
import { isSecretKey, redactExcerpt, redactSecrets } from '../redact';
import type { Tool } from './tools';

type HttpSettings = NonNullable<Config['agent']['http']>;
type Allowed = HttpSettings['allow'][number];

const MAX_REDIRECTS = 3;
/** The characters of a non-2xx body that its error quotes. */
const ERROR_EXCERPT = 2000;

/**
 * The path as a server that decodes before it resolves dot segments reads it (Python's
 * http.server, nginx's URI normalisation, Tomcat's `..;`): `%2F` and `%5C` become `/`, and
 * `.`/`..` segments are resolved after decoding. The URL parser keeps `..%2f` as one segment,
 * so a path under the prefix for it can name a file outside it for such a server. Undefined
 * when the path is not valid percent-encoding.
 */
function pathAsDecoded(path: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  const segments: string[] = [];
  const parts = decoded.replace(/\\/g, '/').split('/').slice(1);
  parts.forEach((segment, i) => {
    const name = segment.split(';')[0];
    if (name === '..') segments.pop();
    if (name === '.' || name === '..') {
      if (i === parts.length - 1) segments.push('');
      return;
    }
    segments.push(segment);
  });
  return `/${segments.join('/')}`;
}

/** A prefix ending without `/` matches itself and what follows a `/`, `?` or nothing: /api/v1 never matches /api/v10. */
function under(path: string, base: string): boolean {
  return base.endsWith('/') ? path.startsWith(base) : path === base || path.startsWith(`${base}/`);
}

/** The allow entry a URL falls under, or undefined. Exported for tests. */
export function allowedEntry(raw: string, allow: Allowed[]): { url: URL; entry: Allowed } | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) return undefined;
  for (const entry of allow) {
    const prefix = new URL(entry.prefix);
    if (url.origin !== prefix.origin) continue;
    // Under the prefix as parsed, and as read by a server that decodes `%2F` first
    // (`/api/v4/projects/group%2Fproject` stays under `/api/v4/`; `/runbooks/..%2fsecret` does not).
    const decoded = pathAsDecoded(url.pathname);
    const base = prefix.pathname;
    if (under(url.pathname, base) && decoded !== undefined && under(decoded, pathAsDecoded(base) ?? base)) return { url, entry };
  }
  return undefined;
}

/**
 * The values of the configured credential headers (the names config validation treats as
 * credentials), and their words of 8+ characters (the token of `Bearer <token>`).
 */
export function headerSecrets(allow: Allowed[]): string[] {
  const values = allow.flatMap((entry) => Object.entries(entry.headers ?? {}).filter(([name]) => isSecretKey(name) || /key/i.test(name)).map(([, value]) => value));
  return values.flatMap((value) => [value, ...value.split(/\s+/).filter((word) => word.length >= 8)]);
}

async function readCapped(response: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated };
}

export function httpGetTool(settings: HttpSettings | undefined): Tool {
  const allow = settings?.allow ?? [];
  const prefixes = allow.map((a) => a.prefix);
  return {
    name: 'http_get',
    description: `GET a URL (read-only) under one of these prefixes: ${prefixes.length > 0 ? prefixes.join(', ') : '(none configured)'}. `
      + 'Use it for Prometheus (/api/v1/query?query=…, /api/v1/query_range?query=…&start=…&end=…&step=…), Grafana, or a runbook URL the event carries. '
      + 'Any other URL is refused.',
    parameters: {
      type: 'object', additionalProperties: false, required: ['url'],
      properties: { url: { type: 'string', description: 'the absolute URL, with its query string' } },
    },
    async run(input, context) {
      const secrets = headerSecrets(allow);
      try {
        return redactSecrets(await fetchAllowed(input, context, secrets), secrets);
      } catch (error) {
        if (isHookError(error)) throw new HookError(error.code, redactSecrets(error.message, secrets), { retryable: error.retryable });
        throw error;
      }
    },
  };

  /** The answer's text, its body masked of `secrets` before any cut (redactExcerpt); `run` masks the rest (status line, errors). */
  async function fetchAllowed(input: unknown, context: Parameters<Tool['run']>[1], secrets: string[]): Promise<string> {
    const raw = input && typeof input === 'object' ? (input as { url?: unknown }).url : undefined;
    if (typeof raw !== 'string' || raw === '') throw new HookError('tool_bad_input', 'http_get needs {"url": "<absolute URL>"}');
    if (allow.length === 0) throw new HookError('tool_unconfigured', 'http_get: agent.http.allow lists no URL prefixes');
    let target = allowedEntry(raw, allow);
    if (!target) throw new HookError('tool_url_refused', `http_get: ${raw} is not under an allowed prefix (${prefixes.join(', ')})`);
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(settings?.timeout_ms ?? 10_000)]);
    for (let hop = 0; ; hop++) {
      let response: Response;
      try {
        response = await fetch(target.url, { method: 'GET', redirect: 'manual', signal, headers: { accept: 'application/json, text/plain;q=0.9, */*;q=0.5', ...(target.entry.headers ?? {}) } });
      } catch (error) {
        if (context.signal.aborted) throw error;
        throw new HookError('tool_http_error', `http_get: ${target.url.origin}${target.url.pathname} failed: ${signal.aborted ? 'timed out' : error instanceof Error ? error.message : String(error)}`);
      }
      if (response.status >= 300 && response.status < 400 && response.headers.get('location')) {
        await response.body?.cancel();
        const next = new URL(response.headers.get('location') as string, target.url).href;
        const nextTarget = allowedEntry(next, allow);
        if (!nextTarget) throw new HookError('tool_redirect_refused', `http_get: ${target.url.href} redirects to ${next}, which is not under an allowed prefix; not followed`);
        if (hop >= MAX_REDIRECTS) throw new HookError('tool_redirect_refused', `http_get: more than ${MAX_REDIRECTS} redirects`);
        target = nextTarget;
        continue;
      }
      let body: { text: string; truncated: boolean };
      try {
        body = await readCapped(response, settings?.max_bytes ?? 256 * 1024);
      } catch (error) {
        if (context.signal.aborted) throw error;
        throw new HookError('tool_http_error', `http_get: reading ${target.url.origin}${target.url.pathname} failed: ${signal.aborted ? 'timed out' : String(error)}`);
      }
      const head = `HTTP ${response.status} ${response.headers.get('content-type') ?? ''}`.trim();
      const tail = body.truncated ? `\n…[truncated at ${settings?.max_bytes ?? 256 * 1024} bytes]` : '';
      // Masked before the error excerpt's cut; a read cut at max_bytes may end in a secret's start.
      if (!response.ok) throw new HookError('tool_http_error', `${head}\n${redactExcerpt(body.text, secrets, ERROR_EXCERPT, body.truncated)}`);
      return `${head}\n${redactExcerpt(body.text, secrets, Infinity, body.truncated)}${tail}`;
    }
  }
}
