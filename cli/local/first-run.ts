/** First run of `serve`: a commented config.yaml, and `.env` loading for `${VAR}` references. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSecretKey } from '../../functions/core/redact';
import { parseDotEnv } from './config-source';
import { tightenConfigDir } from './config-dir-mode';

export const CONFIG_TEMPLATE = `# hookagent configuration (see README, "Configuration").
# Secrets are written only as \${VAR} references: set them in the environment or in .env
# next to this file (KEY=value lines).

webhooks:
  # github: { secret: \${GITHUB_WEBHOOK_SECRET} }   # the secret you set in GitHub's webhook settings
  # gitlab: { secret: \${GITLAB_WEBHOOK_SECRET} }   # the secret token of the GitLab webhook
  max_payload_size: 1MB
  # public_url: https://hooks.example.com          # the URL senders use, for printed setup instructions

agent:
  provider: echo          # echo: the reply is the rendered prompt (no model needed)
  timeout: 120s
  max_steps: 8
  # a model: provider: anthropic (or openai, bedrock), model: claude-haiku-4-5, api_key: \${ANTHROPIC_API_KEY}
  # max_tokens: 1024                      # the reply's token limit; a reply cut at it is never posted
  # budget: { daily_tokens: 2000000 }     # tokens per UTC day over every subscription
  # http: { allow: [{ prefix: https://prometheus.internal/api/v1/, headers: { Authorization: "Bearer \${PROM_TOKEN}" } }] }   # http_get (alert-triage)

delivery:
  timeout: 10s
  # codehost:
  #   github: { token: \${GITHUB_TOKEN} }
  #   gitlab: { token: \${GITLAB_TOKEN} }
  # teamchat:  { provider: slack, webhook_url: \${SLACK_WEBHOOK_URL} }
  # messenger: { provider: telegram, bot_token: \${TELEGRAM_BOT_TOKEN}, chat_id: "-100123" }
`;

/** serve's start output (stdout, with its banner): a stdout that cannot be written loses it, not the service. */
function startWarning(text: string): void {
  try {
    process.stdout.write(`warning: ${text}\n`);
  } catch {
    // Lost with the rest of what cannot be written.
  }
}

/**
 * serve's start: writes the template when there is no config.yaml (true when it did), and
 * makes the config dir, its `.env` and config.yaml the owner's alone, saying with `warn`
 * what stays readable by others.
 */
export function ensureConfig(configDir: string, warn: (text: string) => void = startWarning): boolean {
  const path = join(configDir, 'config.yaml');
  const writes = !existsSync(path);
  if (writes) {
    // Its .env holds the secrets: the directory is the owner's alone.
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    writeFileSync(path, CONFIG_TEMPLATE, { mode: 0o600 });
  }
  // A directory an earlier version (or the user) made keeps its mode: tightened here.
  for (const problem of tightenConfigDir(configDir)) warn(problem);
  return writes;
}

/** The variables of `{config_dir}/.env` (none when there is no such file). */
function readDotEnv(configDir: string): Map<string, string> {
  const path = join(configDir, '.env');
  return existsSync(path) ? parseDotEnv(readFileSync(path, 'utf8')) : new Map();
}

/**
 * `KEY=value` lines of `{config_dir}/.env`; the environment wins over the file, unless it
 * holds the variable empty: an empty value is unset, as serve reads it (config-source.ts),
 * so `status` and `test --send` see the secret serve uses.
 */
export function loadDotEnv(configDir: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const loaded: string[] = [];
  for (const [key, value] of readDotEnv(configDir)) {
    if (!env[key]) {
      env[key] = value;
      loaded.push(key);
    }
  }
  return loaded;
}

/**
 * Values of `.env` variables named like secrets (…_TOKEN, …_API_KEY, …_SECRET), whether
 * config.yaml references them or not: the console masks them wherever they appear.
 */
export function dotEnvSecretValues(configDir: string): string[] {
  return [...readDotEnv(configDir)].filter(([key, value]) => isSecretKey(key) && value.length >= 4).map(([, value]) => value);
}
