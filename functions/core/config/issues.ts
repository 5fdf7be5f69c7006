/**
 * config.yaml's problems as the user reads them: every one with its key path and what to
 * write instead; ajv's schema errors translated, inline secrets refused with a hint.
 */
import type { ErrorObject } from 'ajv';
import { closest } from '../suggest';
import { badReferences, referenceName } from './references';
import { DURATION_FORMAT, SIZE_FORMAT } from './format-rules';
import { SECRET_KEYS } from './schema';

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


export function configError(issues: ConfigIssue[]): ConfigError {
  const lines = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message));
  return { code: 'config_invalid', message: `Invalid configuration:\n  ${lines.join('\n  ')}`, issues };
}

function dotted(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

export function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

export function schemaIssues(errors: ErrorObject[]): ConfigIssue[] {
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
        // Sizes and durations describe their format (schema.ts): "must be a string or a integer" names none.
        const format = (error.parentSchema as { description?: unknown } | undefined)?.description;
        if (format === SIZE_FORMAT || format === DURATION_FORMAT) {
          issues.push({ path, message: `must be ${format}` });
          break;
        }
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
export function literalSecretIssues(value: unknown, path: string): ConfigIssue[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const issues: ConfigIssue[] = [];
  for (const [key, item] of Object.entries(value)) {
    const here = join(path, key);
    if (SECRET_KEYS.has(key)) {
      const values = Array.isArray(item) ? item : [item];
      // A value with a malformed reference is named by referenceIssues, at its own index.
      if (values.some((v) => typeof v === 'string' && referenceName(v) === undefined && badReferences(v).length === 0)) {
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

const WRITE_NAME = 'write ${VAR_NAME} with letters, digits and underscores';

/**
 * Every `${` of the parsed document that does not start a `${NAME}` reference, named by key
 * path (list items by index), and every key that holds a `${`: references are replaced in
 * values only. A comment is not in the document, so its `${…}` are not checked.
 */
export function referenceIssues(value: unknown, path: string): ConfigIssue[] {
  if (typeof value === 'string') {
    return badReferences(value).map((bad) => ({
      path,
      message: bad.closed ? `${bad.text} is not a valid reference; ${WRITE_NAME}` : `${bad.text} is not closed with }; ${WRITE_NAME}`,
    }));
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => referenceIssues(item, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => [
    ...(key.includes('${') ? [{ path: join(path, key), message: 'a key cannot hold a reference (${…} is replaced in values only); write the key itself' }] : []),
    ...referenceIssues(item, join(path, key)),
  ]);
}
