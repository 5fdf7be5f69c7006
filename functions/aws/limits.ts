/**
 * What a deployment on AWS can honour. The configuration schema accepts these values in
 * general; packaging for Lambda refuses the ones the platform would break.
 */
import type { Config } from '../core/config/types';
import type { ConfigIssue } from '../core/config/load';
import { referencedNames } from '../core/config/references';

/** serverless.yml sets these; keep them in step. */
export const WORKER_TIMEOUT_SECONDS = 300;
export const API_GATEWAY_MAX_BODY = 10 * 1024 * 1024;
/**
 * API Gateway hands the body to Lambda inside a synchronous invocation, whose request is
 * capped at 6 MB; base64 (non-text bodies) adds a third, and headers need room too.
 */
export const LAMBDA_MAX_BODY = 4 * 1024 * 1024;

export function awsLimitIssues(config: Config): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (config.webhooks.max_payload_size > API_GATEWAY_MAX_BODY) {
    issues.push({ path: 'webhooks.max_payload_size', message: "must be at most 10MB (API Gateway's request limit), and 4MB on Lambda" });
  } else if (config.webhooks.max_payload_size > LAMBDA_MAX_BODY) {
    issues.push({ path: 'webhooks.max_payload_size', message: "must be at most 4MB on AWS: API Gateway passes the body to Lambda within the 6 MB invocation limit (base64 for non-text bodies)" });
  }
  // The agent and at least one round of deliveries must fit in one worker invocation.
  const budget = WORKER_TIMEOUT_SECONDS * 1000;
  if (config.agent.timeout_ms + 3 * config.delivery.timeout_ms > budget) {
    issues.push({
      path: 'agent.timeout',
      message: `agent.timeout plus 3 × delivery.timeout must stay under the worker's ${WORKER_TIMEOUT_SECONDS}s Lambda timeout (now ${(config.agent.timeout_ms + 3 * config.delivery.timeout_ms) / 1000}s)`,
    });
  }
  issues.push(...bedrockModelIssues(config));
  return issues;
}

/**
 * With Bedrock the worker's role may invoke only the models config.yaml names
 * (infra/deploy-config.cjs), so they must be written out: a `${VAR}` is known at run time only.
 */
function bedrockModelIssues(config: Config): ConfigIssue[] {
  if (config.agent.provider !== 'bedrock') return [];
  const reference = (model: string) => referencedNames(model).length > 0;
  if (!config.agent.model) {
    return [{ path: 'agent.model', message: 'is required with provider bedrock on AWS: the worker is allowed to invoke that model only, e.g. eu.anthropic.claude-sonnet-4-20250514-v1:0' }];
  }
  const issues: ConfigIssue[] = [];
  if (reference(config.agent.model)) issues.push({ path: 'agent.model', message: 'must name the Bedrock model literally, not a ${VAR} reference: the worker is allowed to invoke that model only' });
  (config.agent.models ?? []).forEach((model, i) => {
    if (reference(model)) issues.push({ path: `agent.models[${i}]`, message: 'must name the Bedrock model literally, not a ${VAR} reference: the worker is allowed to invoke the models listed' });
  });
  return issues;
}
