/**
 * config.yaml: parse (js-yaml), validate (schema.ts's JSON Schema, compiled by ajv at build
 * time into config-validator.generated.ts), normalise (defaults, sizes, durations, CIDR)
 * and, separately, resolve `${VAR}` references through a SecretSource.
 * Every problem is reported with its key path and what to write instead.
 */
import { closest } from '../suggest';
import type { ErrorObject } from 'ajv';
import * as yaml from 'js-yaml';
import { fail, ok, type Result } from '../errors';
import type { SecretSource } from '../ports';
import { isHttpUrl, parseCidr, parseDuration, parseSize } from './formats';
import { protectReferences, referencedNames, referenceName, restoreReferences, substitute } from './references';
import { validateConfig as validate } from './config-validator.generated';
import { SECRET_KEYS } from './schema';
import { normaliseAgentExtras } from './agent-extras';
import type { Config, ConfigSection } from './types';
import { MAX_CONFIG_VALUES, oversizedKey } from './size';

export interface ConfigIssue {
  /** Dotted key path, e.g. `webhooks.max_payload_size`; empty for the whole file. */
  path: string;
  message: string;
}

export interface ConfigError {
  code: 'config_invalid';
  message: string;
  issues: ConfigIssue[];
}

/** API Gateway refuses request bodies over 10 MB, so a larger limit could never be honoured. */
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
const SUGGESTED_VARIABLES: Record<string, string> = {
  'webhooks.github.secret': 'GITHUB_WEBHOOK_SECRET',
  'webhooks.gitlab.secret': 'GITLAB_WEBHOOK_SECRET',
  'agent.api_key': 'OPENAI_API_KEY',
  'delivery.codehost.github.token': 'GITHUB_TOKEN',
  'delivery.codehost.gitlab.token': 'GITLAB_TOKEN',
  'delivery.codehost.github.app.private_key': 'GITHUB_APP_PRIVATE_KEY',
  'delivery.teamchat.webhook_url': 'SLACK_WEBHOOK_URL',
  'delivery.teamchat.bot_token': 'SLACK_BOT_TOKEN',
  'delivery.messenger.bot_token': 'TELEGRAM_BOT_TOKEN',
};


function configError(issues: ConfigIssue[]): ConfigError {
  const lines = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message));
  return { code: 'config_invalid', message: `Invalid configuration:\n  ${lines.join('\n  ')}`, issues };
}

/** Parses and validates config text. An empty file is a valid, all-defaults configuration. */
export function parseConfig(text: string): Result<Config, ConfigError> {
  const { text: safeText, bad } = protectReferences(text);
  if (bad.length > 0) {
    return fail(configError(bad.map((b) => ({
      path: '',
      message: `line ${b.line}: ${b.text} is not a valid reference; write \${VAR_NAME} with letters, digits and underscores`,
    }))));
  }
  let document: unknown;
  // js-yaml 5 refuses an empty stream; a file of comments only means "all defaults".
  const empty = safeText.split('\n').every((line) => /^\s*(#.*)?$/.test(line));
  try {
    document = empty ? {} : yaml.load(safeText, { schema: yaml.CORE_SCHEMA });
  } catch (error) {
    const reason = error instanceof yaml.YAMLException ? error.reason : String(error);
    const line = error instanceof yaml.YAMLException && error.mark ? ` at line ${error.mark.line + 1}` : '';
    return fail(configError([{ path: '', message: `config.yaml is not valid YAML${line}: ${reason}` }]));
  }
  if (document === null || document === undefined) document = {};
  const oversized = oversizedKey(document);
  if (oversized) return fail(configError([{ path: oversized.path, message: `expands to more than ${MAX_CONFIG_VALUES} values (YAML aliases repeat what they name); write the values out` }]));
  if (typeof document !== 'object' || Array.isArray(document)) {
    return fail(configError([{ path: '', message: 'config.yaml must be a mapping of sections (webhooks, agent, delivery, aws)' }]));
  }
  const raw = restoreReferences(document) as Record<string, unknown>;
  const secretIssues = literalSecretIssues(raw, '');
  if (!validate(raw)) return fail(configError([...schemaIssues(validate.errors ?? []), ...secretIssues]));
  const issues = [...secretIssues];
  const config = normalise(raw, issues);
  return issues.length > 0 ? fail(configError(issues)) : ok(config);
}

function dotted(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function schemaIssues(errors: ErrorObject[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const anyOfPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  for (const error of errors) {
    const path = dotted(error.instancePath);
    if (anyOfPaths.has(error.instancePath) && error.keyword !== 'anyOf') continue;
    if (error.instancePath !== '' && [...anyOfPaths].some((p) => error.instancePath.startsWith(`${p}/`))) continue;
    switch (error.keyword) {
      case 'additionalProperties': {
        const key = String(error.params.additionalProperty);
        const allowed = Object.keys((error.parentSchema as { properties?: object }).properties ?? {});
        const guess = closest(key, allowed);
        const hint = guess ? `did you mean '${guess}'?` : `known keys here: ${allowed.join(', ')}`;
        issues.push({ path: join(path, key), message: `unknown key; ${hint}` });
        break;
      }
      case 'required':
        issues.push({ path: join(path, String(error.params.missingProperty)), message: 'is required here' });
        break;
      case 'anyOf':
        issues.push({ path, message: 'must be a ${VAR_NAME} reference or a list of them' });
        break;
      case 'enum':
        issues.push({ path, message: `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}` });
        break;
      case 'type': {
        const expected = ([] as string[]).concat(error.params.type as string | string[]);
        issues.push({ path, message: `must be ${expected.map((t) => (t === 'object' ? 'a mapping' : t === 'array' ? 'a list' : `a ${t}`)).join(' or ')}` });
        break;
      }
      case 'pattern':
        issues.push({ path, message: path === 'aws.stage' ? 'must be letters, digits and dashes (at most 32), e.g. prod' : `must match ${String(error.params.pattern)}` });
        break;
      case 'minimum':
      case 'maximum':
        issues.push({ path, message: `must be ${error.keyword === 'minimum' ? 'at least' : 'at most'} ${String(error.params.limit)}` });
        break;
      case 'minItems':
      case 'minLength':
        issues.push({ path, message: 'must not be empty' });
        break;
      default:
        issues.push({ path, message: error.message ?? 'is invalid' });
    }
  }
  return issues;
}

/** Secret-bearing keys take only `${VAR}` references; the literal itself is never echoed. */
function literalSecretIssues(value: unknown, path: string): ConfigIssue[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const issues: ConfigIssue[] = [];
  for (const [key, item] of Object.entries(value)) {
    const here = join(path, key);
    if (SECRET_KEYS.has(key)) {
      const values = Array.isArray(item) ? item : [item];
      if (values.some((v) => typeof v === 'string' && referenceName(v) === undefined)) {
        const variable = SUGGESTED_VARIABLES[here] ?? here.replace(/\./g, '_').toUpperCase();
        issues.push({
          path: here,
          message: `inline secrets are not allowed; write \${${variable}} and set ${variable} in the environment (on AWS: SSM parameter /hookagent/<stage>/${variable})`,
        });
      }
    } else {
      issues.push(...literalSecretIssues(item, here));
    }
  }
  return issues;
}

type Raw = Record<string, unknown>;
const section = (raw: Raw, key: string): Raw => (raw[key] as Raw | undefined) ?? {};
const secretList = (value: unknown): string[] => ([] as string[]).concat(value as string | string[]);

function checkUrl(issues: ConfigIssue[], path: string, value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (referencedNames(value).length === 0 && !isHttpUrl(value)) {
    issues.push({ path, message: `must be an http(s) URL, e.g. https://example.com` });
  }
  return value.replace(/\/+$/, '');
}

function normalise(raw: Raw, issues: ConfigIssue[]): Config {
  const webhooks = section(raw, 'webhooks');
  const agent = section(raw, 'agent');
  const delivery = section(raw, 'delivery');
  const codehost = section(delivery, 'codehost');

  let maxPayloadSize: number = DEFAULTS.max_payload_size;
  if (webhooks.max_payload_size !== undefined) {
    const parsed = parseSize(webhooks.max_payload_size as string | number);
    if (parsed === undefined) {
      issues.push({ path: 'webhooks.max_payload_size', message: 'must be a size such as 1MB, 512KB, 2MiB or a number of bytes' });
    } else if (parsed > MAX_PAYLOAD_LIMIT) {
      issues.push({ path: 'webhooks.max_payload_size', message: "must be at most 10MB (API Gateway's request limit)" });
    } else {
      maxPayloadSize = parsed;
    }
  }

  let allowedIps: string[] | undefined;
  if (Array.isArray(webhooks.allowed_ips)) {
    allowedIps = [];
    (webhooks.allowed_ips as string[]).forEach((entry, index) => {
      const cidr = parseCidr(entry);
      if (cidr) allowedIps?.push(cidr);
      else issues.push({ path: `webhooks.allowed_ips[${index}]`, message: `'${entry}' is not an IPv4 or IPv6 address or CIDR range, e.g. 140.82.112.0/20 or 2a0a:a440::/29` });
    });
  }

  const duration = (path: string, value: unknown, fallback: number): number => {
    if (value === undefined) return fallback;
    const parsed = parseDuration(value as string | number);
    if (parsed === undefined) {
      issues.push({ path, message: 'must be a duration such as 10s, 2m, 500ms or a number of seconds' });
      return fallback;
    }
    return parsed;
  };

  const config: Config = {
    webhooks: { max_payload_size: maxPayloadSize },
    agent: {
      provider: (agent.provider as Config['agent']['provider'] | undefined) ?? 'echo',
      timeout_ms: duration('agent.timeout', agent.timeout, DEFAULTS.agent_timeout_ms),
      max_steps: (agent.max_steps as number | undefined) ?? DEFAULTS.max_steps,
      ...(agent.concurrency !== undefined ? { concurrency: agent.concurrency as number } : {}),
    },
    delivery: { timeout_ms: duration('delivery.timeout', delivery.timeout, DEFAULTS.delivery_timeout_ms), codehost: {} },
  };
  if (allowedIps) config.webhooks.allowed_ips = allowedIps;
  for (const host of ['github', 'gitlab'] as const) {
    const settings = webhooks[host] as Raw | undefined;
    if (settings) config.webhooks[host] = { secret: secretList(settings.secret) };
  }
  const publicUrl = checkUrl(issues, 'webhooks.public_url', webhooks.public_url);
  if (publicUrl) config.webhooks.public_url = publicUrl;

  if (typeof agent.model === 'string') config.agent.model = agent.model;
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
    const settings = codehost[host] as Raw | undefined;
    if (!settings) continue;
    const apiUrl = checkUrl(issues, `delivery.codehost.${host}.api_url`, settings.api_url) ?? hostDefaults[host];
    config.delivery.codehost[host] = { token: (settings.token as string | undefined) ?? '', api_url: apiUrl };
    const app = settings.app as { app_id: string | number; private_key: string } | undefined;
    if (app) config.delivery.codehost[host]!.app = { app_id: String(app.app_id), private_key: app.private_key };
    if (settings.token === undefined && !app) issues.push({ path: `delivery.codehost.${host}`, message: host === 'github' ? 'needs token (${GITHUB_TOKEN}) or app: { app_id, private_key }' : 'needs token (${GITLAB_TOKEN})' });
  }
  if (codehost.allow_mentions === true) config.delivery.codehost.allow_mentions = true;

  const teamchat = delivery.teamchat as Raw | undefined;
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

  const messenger = delivery.messenger as Raw | undefined;
  if (messenger) {
    config.delivery.messenger = {
      provider: 'telegram',
      bot_token: messenger.bot_token as string,
      api_url: checkUrl(issues, 'delivery.messenger.api_url', messenger.api_url) ?? DEFAULTS.telegram_api_url,
      ...(messenger.chat_id !== undefined ? { chat_id: String(messenger.chat_id) } : {}),
    };
  }

  const aws = raw.aws as Raw | undefined;
  if (aws) {
    config.aws = { stage: aws.stage as string };
    if (typeof aws.region === 'string') config.aws.region = aws.region;
    if (aws.tables) config.aws.tables = aws.tables as NonNullable<Config['aws']>['tables'];
  }
  return config;
}

/**
 * Replaces every `${VAR}` in the given sections with its value from `source`. A reference
 * to a variable that is not set is an error naming it and the key that uses it.
 */
export async function resolveConfig(
  config: Config,
  source: SecretSource,
  sections: readonly ConfigSection[] = ['webhooks', 'agent', 'delivery', 'aws'],
): Promise<Result<Config, ConfigError>> {
  const uses = new Map<string, string[]>();
  const collect = (value: unknown, path: string): void => {
    if (typeof value === 'string') {
      for (const name of referencedNames(value)) uses.set(name, [...(uses.get(name) ?? []), path]);
    } else if (Array.isArray(value)) {
      // A scalar secret is normalised to a one-entry list: name the key as the user wrote it.
      value.forEach((item, i) => collect(item, value.length === 1 ? path : `${path}[${i}]`));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) collect(item, join(path, key));
    }
  };
  for (const name of sections) collect(config[name], name);

  const values = new Map<string, string>();
  const issues: ConfigIssue[] = [];
  await Promise.all([...uses.keys()].map(async (name) => {
    const value = await source.get(name);
    if (value === undefined || value === '') {
      issues.push({ path: (uses.get(name) ?? [])[0] ?? '', message: `references \${${name}}, which is not set; set the environment variable ${name}${source.where ? ` (${source.where(name)})` : ''}` });
    } else {
      values.set(name, value);
    }
  }));
  if (issues.length > 0) return fail(configError(issues.sort((a, b) => a.path.localeCompare(b.path))));

  const replace = (value: unknown): unknown => {
    if (typeof value === 'string') return substitute(value, values);
    if (Array.isArray(value)) return value.map(replace);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replace(v)]));
    }
    return value;
  };
  const resolved = { ...config };
  for (const name of sections) {
    if (config[name] !== undefined) (resolved as Record<string, unknown>)[name] = replace(config[name]);
  }
  return ok(resolved);
}
