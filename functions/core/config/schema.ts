/**
 * The one JSON Schema of config.yaml (DESIGN §2.3). Unknown keys are errors so that a
 * typo never passes silently. Formats that need code (sizes, durations, CIDR, references)
 * are checked after the schema, in load.ts.
 */
import { DURATION_FORMAT, SIZE_FORMAT } from './format-rules';

const secretRef = {
  type: 'string',
  description: 'a ${VAR_NAME} reference',
} as const;

const secretOrList = {
  anyOf: [secretRef, { type: 'array', items: secretRef, minItems: 1 }],
} as const;

// The description is what a type error says (issues.ts): the format to write, not ajv's type names.
// A size is whole bytes; a duration may be a fraction of seconds (`timeout: 1.5`), as the string "1.5" may.
const size = { type: ['string', 'integer'], description: SIZE_FORMAT } as const;
const duration = { type: ['string', 'number'], description: DURATION_FORMAT } as const;
const url = { type: 'string', minLength: 1 } as const;

export const configSchema = {
  $id: 'hookagent-config',
  type: 'object',
  additionalProperties: false,
  properties: {
    webhooks: {
      type: 'object',
      additionalProperties: false,
      properties: {
        github: { type: 'object', additionalProperties: false, required: ['secret'], properties: { secret: secretOrList } },
        gitlab: { type: 'object', additionalProperties: false, required: ['secret'], properties: { secret: secretOrList } },
        allowed_ips: { type: 'array', items: { type: 'string' } },
        max_payload_size: size,
        public_url: url,
      },
    },
    agent: {
      type: 'object',
      additionalProperties: false,
      properties: {
        provider: { enum: ['echo', 'bedrock', 'openai', 'anthropic'] },
        model: { type: 'string', minLength: 1 },
        // Other models subscriptions may name (--model): on AWS with Bedrock the worker's role allows these too.
        models: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
        base_url: url,
        api_key: secretRef,
        region: { type: 'string', minLength: 1 },
        timeout: duration,
        max_steps: { type: 'integer', minimum: 1, maximum: 50 },
        max_tokens: { type: 'integer', minimum: 16, maximum: 200000 },
        budget: { type: 'object', additionalProperties: false, properties: { daily_tokens: { type: 'integer', minimum: 1 } } },
        http: {
          type: 'object', additionalProperties: false,
          properties: {
            allow: {
              type: 'array',
              items: {
                type: 'object', additionalProperties: false, required: ['prefix'],
                properties: { prefix: url, headers: { type: 'object', additionalProperties: { type: 'string' } } },
              },
            },
            timeout: duration,
            max_bytes: size,
          },
        },
        concurrency: { type: 'integer', minimum: 1, maximum: 100 },
      },
    },
    delivery: {
      type: 'object',
      additionalProperties: false,
      properties: {
        timeout: duration,
        codehost: {
          type: 'object',
          additionalProperties: false,
          properties: {
            github: {
              type: 'object', additionalProperties: false,
              properties: {
                token: secretRef, api_url: url,
                app: {
                  type: 'object', additionalProperties: false, required: ['app_id', 'private_key'],
                  properties: { app_id: { type: ['integer', 'string'] }, private_key: secretRef },
                },
              },
            },
            gitlab: {
              type: 'object', additionalProperties: false, required: ['token'],
              properties: { token: secretRef, api_url: url },
            },
            allow_mentions: { type: 'boolean' },
          },
        },
        teamchat: {
          type: 'object',
          additionalProperties: false,
          required: ['provider'],
          properties: {
            provider: { enum: ['slack'] },
            webhook_url: secretRef,
            bot_token: secretRef,
            channel: { type: 'string', minLength: 1 },
            api_url: url,
          },
        },
        messenger: {
          type: 'object',
          additionalProperties: false,
          required: ['provider', 'bot_token'],
          properties: {
            provider: { enum: ['telegram'] },
            bot_token: secretRef,
            chat_id: { type: ['string', 'integer'] },
            api_url: url,
          },
        },
      },
    },
    aws: {
      type: 'object',
      additionalProperties: false,
      required: ['stage'],
      properties: {
        region: { type: 'string', minLength: 1 },
        stage: { type: 'string', pattern: '^[a-zA-Z0-9-]{1,32}$' },
        tables: {
          type: 'object',
          additionalProperties: false,
          properties: {
            subscriptions: { type: 'string', minLength: 3 },
            dedup: { type: 'string', minLength: 3 },
            events: { type: 'string', minLength: 3 },
          },
        },
      },
    },
  },
} as const;

/** Keys whose value is a secret: only `${VAR}` references are accepted there. */
export const SECRET_KEYS = new Set(['secret', 'token', 'api_key', 'bot_token', 'webhook_url', 'private_key']);
