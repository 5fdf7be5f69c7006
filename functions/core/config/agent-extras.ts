/**
 * The `agent` keys of issue 19 after the schema: `max_tokens`, `budget.daily_tokens` and
 * `http` (the `http_get` tool's allowed prefixes). Prefixes must be absolute http(s) URLs
 * without credentials, query or fragment; headers that carry credentials must be `${VAR}`
 * references, never literals.
 */
import { isHttpUrl, parseDuration, parseSize } from './formats';
import { referencedNames } from './references';
import type { RawAgent } from './raw';
import type { Config } from './types';

type Raw = Record<string, unknown>;
interface Issue { path: string; message: string }

export const HTTP_GET_DEFAULTS = { timeout_ms: 10_000, max_bytes: 256 * 1024 } as const;
const CREDENTIAL_HEADER = /authorization|cookie|token|key|secret|password/i;

export function normaliseAgentExtras(agent: RawAgent, config: Config, issues: Issue[]): void {
  if (typeof agent.max_tokens === 'number') config.agent.max_tokens = agent.max_tokens;
  const budget = agent.budget as Raw | undefined;
  if (budget && typeof budget.daily_tokens === 'number') config.agent.budget = { daily_tokens: budget.daily_tokens };
  if (config.agent.provider === 'anthropic' && !config.agent.model) {
    issues.push({ path: 'agent.model', message: "is required with provider 'anthropic', e.g. claude-haiku-4-5" });
  }
  const http = agent.http as Raw | undefined;
  if (!http) return;
  let timeoutMs: number = HTTP_GET_DEFAULTS.timeout_ms;
  if (http.timeout !== undefined) {
    const parsed = parseDuration(http.timeout as string | number);
    if (parsed === undefined || parsed > 60_000) issues.push({ path: 'agent.http.timeout', message: 'must be a duration of at most 60s, e.g. 10s' });
    else timeoutMs = parsed;
  }
  let maxBytes: number = HTTP_GET_DEFAULTS.max_bytes;
  if (http.max_bytes !== undefined) {
    const parsed = parseSize(http.max_bytes as string | number);
    if (parsed === undefined || parsed > 5 * 1024 * 1024) issues.push({ path: 'agent.http.max_bytes', message: 'must be a size of at most 5MB, e.g. 256KB' });
    else maxBytes = parsed;
  }
  const allow: Array<{ prefix: string; headers?: Record<string, string> }> = [];
  ((http.allow as Raw[] | undefined) ?? []).forEach((entry, index) => {
    const path = `agent.http.allow[${index}]`;
    const prefix = entry.prefix as string;
    let parsed: URL | undefined;
    try {
      parsed = isHttpUrl(prefix) ? new URL(prefix) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!parsed) issues.push({ path: `${path}.prefix`, message: 'must be an absolute http(s) URL, e.g. https://prometheus.internal/api/v1/' });
    else if (parsed.username || parsed.password || parsed.search || parsed.hash) issues.push({ path: `${path}.prefix`, message: 'must not carry credentials, a query or a fragment (put credentials in headers as ${VAR})' });
    const headers = entry.headers as Record<string, string> | undefined;
    for (const [name, value] of Object.entries(headers ?? {})) {
      if (CREDENTIAL_HEADER.test(name) && referencedNames(value).length === 0) {
        issues.push({ path: `${path}.headers.${name}`, message: 'inline secrets are not allowed; write e.g. "Bearer ${PROM_TOKEN}" and set PROM_TOKEN in the environment (on AWS: SSM parameter /hookagent/<stage>/PROM_TOKEN)' });
      }
    }
    if (parsed) allow.push({ prefix: parsed.href, ...(headers ? { headers } : {}) });
  });
  config.agent.http = { allow, timeout_ms: timeoutMs, max_bytes: maxBytes };
}
