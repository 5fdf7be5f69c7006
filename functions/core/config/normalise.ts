/**
 * The validated raw document → `Config`: defaults, sizes in bytes, durations in ms, CIDR
 * ranges, URLs, secrets as lists. `${VAR}` references are kept for resolve.ts.
 */
import { normaliseAgentExtras } from './agent-extras';
import { DURATION_FORMAT, isHttpUrl, parseCidr, parseDuration, parseSize, SIZE_FORMAT } from './formats';
import { hasUrlCredentials, URL_CREDENTIALS } from './format-rules';
import type { ConfigIssue } from './issues';
import { referencedNames } from './references';
import type { RawConfig } from './raw';
import type { Config } from './types';
import { trimUrl, URL_EXAMPLE } from './url-keys';

export const MAX_PAYLOAD_LIMIT = 10 * 1024 * 1024;

export const DEFAULTS = {
  max_payload_size: 1024 * 1024,
  agent_timeout_ms: 120_000,
  max_steps: 8,
  delivery_timeout_ms: 10_000,
  github_api_url: 'https://api.github.com',
  gitlab_api_url: 'https://gitlab.com/api/v4',
  slack_api_url: 'https://slack.com/api',
  telegram_api_url: 'https://api.telegram.org',
} as const;

/** The reference names DESIGN §2.3 uses, suggested when a literal secret is found. */

const secretList = (value: string | readonly string[]): string[] => ([] as string[]).concat(value);

function checkUrl(issues: ConfigIssue[], path: string, value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // A reference is checked once resolved (url-keys.ts).
  if (referencedNames(value).length === 0 && !isHttpUrl(value)) {
    issues.push({ path, message: `must be an http(s) URL, e.g. ${URL_EXAMPLE}` });
  } else if (referencedNames(value).length === 0 && hasUrlCredentials(value)) {
    issues.push({ path, message: URL_CREDENTIALS });
  }
  return trimUrl(value);
}

export function normalise(raw: RawConfig, issues: ConfigIssue[]): Config {
  const webhooks = raw.webhooks ?? {};
  const agent = raw.agent ?? {};
  const delivery = raw.delivery ?? {};
  const codehost = delivery.codehost ?? {};

  let maxPayloadSize: number = DEFAULTS.max_payload_size;
  if (webhooks.max_payload_size !== undefined) {
    const parsed = parseSize(webhooks.max_payload_size);
    if (parsed === undefined) {
      issues.push({ path: 'webhooks.max_payload_size', message: `must be ${SIZE_FORMAT}` });
    } else if (parsed > MAX_PAYLOAD_LIMIT) {
      issues.push({ path: 'webhooks.max_payload_size', message: "must be at most 10MB (API Gateway's request limit)" });
    } else {
      maxPayloadSize = parsed;
    }
  }

  let allowedIps: string[] | undefined;
  if (webhooks.allowed_ips) {
    allowedIps = [];
    webhooks.allowed_ips.forEach((entry, index) => {
      const cidr = parseCidr(entry);
      if (cidr) allowedIps?.push(cidr);
      else issues.push({ path: `webhooks.allowed_ips[${index}]`, message: `'${entry}' is not an IPv4 or IPv6 address or CIDR range, e.g. 140.82.112.0/20 or 2a0a:a440::/29` });
    });
  }

  const duration = (path: string, value: string | number | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    const parsed = parseDuration(value);
    if (parsed === undefined) {
      issues.push({ path, message: `must be ${DURATION_FORMAT}` });
      return fallback;
    }
    return parsed;
  };

  const config: Config = {
    webhooks: { max_payload_size: maxPayloadSize },
    agent: {
      provider: agent.provider ?? 'echo',
      timeout_ms: duration('agent.timeout', agent.timeout, DEFAULTS.agent_timeout_ms),
      max_steps: agent.max_steps ?? DEFAULTS.max_steps,
      ...(agent.concurrency !== undefined ? { concurrency: agent.concurrency } : {}),
    },
    delivery: { timeout_ms: duration('delivery.timeout', delivery.timeout, DEFAULTS.delivery_timeout_ms), codehost: {} },
  };
  if (allowedIps) config.webhooks.allowed_ips = allowedIps;
  for (const host of ['github', 'gitlab'] as const) {
    const settings = webhooks[host];
    if (settings) config.webhooks[host] = { secret: secretList(settings.secret) };
  }
  const publicUrl = checkUrl(issues, 'webhooks.public_url', webhooks.public_url);
  if (publicUrl) config.webhooks.public_url = publicUrl;

  if (typeof agent.model === 'string') config.agent.model = agent.model;
  if (agent.models !== undefined) config.agent.models = [...agent.models];
  if (typeof agent.api_key === 'string') config.agent.api_key = agent.api_key;
  if (typeof agent.region === 'string') config.agent.region = agent.region;
  const agentUrl = checkUrl(issues, 'agent.base_url', agent.base_url);
  if (agentUrl) config.agent.base_url = agentUrl;
  if (config.agent.provider === 'openai' && !config.agent.model) {
    issues.push({ path: 'agent.model', message: "is required with provider 'openai', e.g. gpt-4o-mini" });
  }
  if (config.agent.provider === 'bedrock' && !config.agent.model) {
    issues.push({ path: 'agent.model', message: "is required with provider 'bedrock', e.g. anthropic.claude-3-5-haiku-20241022-v1:0" });
  }
  normaliseAgentExtras(agent, config, issues);

  const hostDefaults = { github: DEFAULTS.github_api_url, gitlab: DEFAULTS.gitlab_api_url } as const;
  for (const host of ['github', 'gitlab'] as const) {
    const settings = codehost[host];
    if (!settings) continue;
    const apiUrl = checkUrl(issues, `delivery.codehost.${host}.api_url`, settings.api_url) ?? hostDefaults[host];
    config.delivery.codehost[host] = { token: settings.token ?? '', api_url: apiUrl };
    const app = 'app' in settings ? settings.app : undefined;
    if (app) config.delivery.codehost[host]!.app = { app_id: String(app.app_id), private_key: app.private_key };
    if (settings.token === undefined && !app) issues.push({ path: `delivery.codehost.${host}`, message: host === 'github' ? 'needs token (${GITHUB_TOKEN}) or app: { app_id, private_key }' : 'needs token (${GITLAB_TOKEN})' });
  }
  if (codehost.allow_mentions === true) config.delivery.codehost.allow_mentions = true;

  const teamchat = delivery.teamchat;
  if (teamchat) {
    if (teamchat.webhook_url === undefined && teamchat.bot_token === undefined) {
      issues.push({ path: 'delivery.teamchat', message: 'needs webhook_url (an incoming webhook) or bot_token and channel' });
    }
    config.delivery.teamchat = {
      provider: 'slack',
      api_url: checkUrl(issues, 'delivery.teamchat.api_url', teamchat.api_url) ?? DEFAULTS.slack_api_url,
      ...(typeof teamchat.webhook_url === 'string' ? { webhook_url: teamchat.webhook_url } : {}),
      ...(typeof teamchat.bot_token === 'string' ? { bot_token: teamchat.bot_token } : {}),
      ...(typeof teamchat.channel === 'string' ? { channel: teamchat.channel } : {}),
    };
  }

  const messenger = delivery.messenger;
  if (messenger) {
    config.delivery.messenger = {
      provider: 'telegram',
      bot_token: messenger.bot_token,
      api_url: checkUrl(issues, 'delivery.messenger.api_url', messenger.api_url) ?? DEFAULTS.telegram_api_url,
      ...(messenger.chat_id !== undefined ? { chat_id: String(messenger.chat_id) } : {}),
    };
  }

  const aws = raw.aws;
  if (aws) {
    config.aws = { stage: aws.stage };
    if (typeof aws.region === 'string') config.aws.region = aws.region;
    if (aws.tables) config.aws.tables = { ...aws.tables };
  }
  return config;
}
