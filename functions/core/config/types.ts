/**
 * The configuration of DESIGN §2.3 after validation and normalisation: sizes in bytes,
 * durations in milliseconds, secrets as lists. Strings may still hold `${VAR}`
 * references until `resolveConfig` replaces them.
 */
export interface WebhookSecrets {
  /** Any one verifies (rotation). Empty = not configured = fail closed. */
  secret: string[];
}

export interface CodehostSettings {
  /** A personal/project access token; empty when only a GitHub App is configured. */
  token: string;
  api_url: string;
  /** GitHub only: act as a GitHub App (installation tokens) instead of `token`. */
  app?: { app_id: string; private_key: string };
}

export interface TeamchatSettings {
  provider: 'slack';
  webhook_url?: string;
  bot_token?: string;
  channel?: string;
  api_url: string;
}

export interface MessengerSettings {
  provider: 'telegram';
  bot_token: string;
  chat_id?: string;
  api_url: string;
}

export type AgentProvider = 'echo' | 'bedrock' | 'openai' | 'anthropic';

export interface Config {
  webhooks: {
    github?: WebhookSecrets;
    gitlab?: WebhookSecrets;
    /** CIDR ranges (normalised, bare addresses as /32 or /128); absent = any address. */
    allowed_ips?: string[];
    max_payload_size: number;
    public_url?: string;
  };
  agent: {
    provider: AgentProvider;
    model?: string;
    /** Other models subscriptions may name with --model; with Bedrock on AWS the worker's role allows only these and `model`. */
    models?: string[];
    base_url?: string;
    api_key?: string;
    /** Bedrock region; defaults to the deployment's region. */
    region?: string;
    timeout_ms: number;
    max_steps: number;
    /** The reply's token limit (issue 19); absent: the provider's default. */
    max_tokens?: number;
    /** Daily token budget over every subscription (issue 19). */
    budget?: { daily_tokens?: number };
    /** `http_get`: the URL prefixes it may read, with headers (values may reference secrets). */
    http?: { allow: Array<{ prefix: string; headers?: Record<string, string> }>; timeout_ms: number; max_bytes: number };
    /** Agent runs at once per worker process/container (default 4); on AWS × the event source mapping's maximum concurrency. */
    concurrency?: number;
  };
  delivery: {
    timeout_ms: number;
    codehost: {
      github?: CodehostSettings;
      gitlab?: CodehostSettings;
      /** Leave @mentions in comments live (default false: they are neutralised, see delivery/mentions.ts). */
      allow_mentions?: boolean;
    };
    teamchat?: TeamchatSettings;
    messenger?: MessengerSettings;
  };
  aws?: {
    region?: string;
    stage: string;
    tables?: { subscriptions?: string; dedup?: string; events?: string };
  };
}

/** Top-level sections; `resolveConfig` resolves references only in the ones asked for. */
export type ConfigSection = keyof Config;
