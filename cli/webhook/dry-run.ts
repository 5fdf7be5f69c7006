/**
 * `webhook test <name> --dry-run`: runs the configured agent for real (provider, skills,
 * tools) on a sample payload (or --payload) and prints the prompt, the transcript and the
 * reply as each subscribed target would get it: masked as the worker masks it (postableReply,
 * recordableRun). Nothing is delivered, nothing is recorded, no budget is charged.
 * Secrets come from the environment and `{config_dir}/.env`, as for `serve`.
 * An `agent: none` subscription calls no model: its reply is the rendered template, by the
 * worker's own rules (worker/direct.ts), `[SILENT]` included.
 */
import { runOf, usageSummary, type AgentRun } from '../../functions/core/agent/run-record';
import { fencePrompt, systemPrompt } from '../../functions/core/agent/system-prompt';
import { resolveConfig } from '../../functions/core/config/load';
import { HookError, isHookError } from '../../functions/core/errors';
import { splitSource, splitType } from '../../functions/core/events/filters';
import type { QueueMessage, Subscription } from '../../functions/core/types';
import { renderPrompt, type Rendered } from '../../functions/core/templates/template';
import { flattenFindings, replyParts } from '../../functions/core/delivery/findings';
import { postableReply, recordableRun } from '../../functions/core/worker/agent-step';
import { deliversDirectly, directMessage, silencedReply } from '../../functions/core/worker/direct';
import { createAgent } from '../../functions/worker/agent-factory';
import { loadDotEnv } from '../local/first-run';
import { withStores, type CliContext } from '../context';
import { transcriptLines } from './event';
import { sampleFor } from '../samples';
import { readPayload } from './test';
import { previewEvent } from './preview-event';
import { sampleChoice } from './sample-event';
import { eventFilterReport, loopGuardReport } from './filter-report';
import { escapeTerminal } from '../../functions/core/log';
import { replyPreviewLines } from './reply-preview';

function samplePayload(filter: string, event: string, action: string | undefined): Record<string, unknown> {
  return sampleFor(filter)?.payload ?? { event_type: event, ...(action ? { action } : {}), test: true, sent_by: 'hookagent webhook test --dry-run' };
}

function usageLine(run: AgentRun | undefined): string | undefined {
  const u = run?.usage;
  return u ? `Usage: ${usageSummary(u)}` : undefined;
}

/** What the run gave: the reply (absent when it failed), the run, the provider (none for a direct delivery). */
interface Outcome {
  reply?: string;
  run?: AgentRun;
  failure?: HookError;
  provider?: string;
}

/** The agent as the worker runs it: the subscription's model, max steps and timeout over the configuration's. */
async function agentOutcome(ctx: CliContext, subscription: Subscription, rendered: Rendered, message: QueueMessage, payload: Record<string, unknown>): Promise<Outcome> {
  loadDotEnv(ctx.configDir);
  const resolved = await resolveConfig(ctx.config, { get: async (n) => process.env[n] }, ['agent', 'delivery']);
  if (!resolved.ok) throw new HookError('config_invalid', resolved.error.message);
  const config = resolved.value;
  const skills = subscription.skills.map((s) => ctx.skills.load(s));
  // On a stage, Bedrock is called where that stage's worker calls it: the stage's region (--region, else
  // aws.region, else us-east-1), not the SDK's own choice from the shell; agent.region still comes first.
  const agent = createAgent({ ...config.agent, ...(subscription.model ? { model: subscription.model } : {}) }, config.delivery, ctx.deployment?.region ?? config.aws?.region);
  const maxTokens = subscription.max_tokens ?? config.agent.max_tokens;
  const provider = config.agent.provider;
  try {
    const result = await agent.run({
      system: systemPrompt(skills), prompt: fencePrompt(rendered), rendered: rendered.text, allowedTools: [...new Set(skills.flatMap((s) => s.tools))],
      timeoutMs: subscription.timeout_ms ?? config.agent.timeout_ms, maxSteps: subscription.max_steps ?? config.agent.max_steps, ...(maxTokens ? { maxTokens } : {}), message, payload,
    });
    const reply = postableReply(result.text, config);
    const run = recordableRun(result.run, config, reply);
    return { reply, provider, ...(run ? { run } : {}) };
  } catch (error) {
    const run = recordableRun(runOf(error), config);
    return { failure: isHookError(error) ? error : new HookError('agent_failed', String(error)), provider, ...(run ? { run } : {}) };
  }
}

export async function dryRun(ctx: CliContext, name: string, payloadOption: string | undefined, eventOption: string | undefined, json: boolean): Promise<void> {
  const subscription = await withStores(ctx, (stores) => stores.subscriptions.get(name));
  if (!subscription) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
  // The sample `--send` takes: a `github:*` subscription's is a pull request, not a stub named `*` (hunt 8 D1).
  const filter = sampleChoice(subscription.events, { eventOption }).filter;
  const [sampleEvent = 'custom', sampleAction] = splitType(splitSource(filter).rest);
  const payload = payloadOption === undefined ? samplePayload(filter, sampleEvent, sampleAction) : readPayload(payloadOption);
  const { event, action, source } = previewEvent(subscription, payload, eventOption);
  const message: QueueMessage = {
    v: 1, event_id: 'evt_dry_run', subscription: name, source, event, ...(action ? { action } : {}),
    delivery_id: 'dry-run', received_at: new Date().toISOString(), payload,
  };
  // A direct delivery's message is the rendered template, delivered as is (hunt 12 D1): no provider is called.
  const direct = deliversDirectly(subscription);
  const rendered = direct ? directMessage(subscription, payload, message) : renderPrompt(subscription.prompt, payload, action ? `${event}.${action}` : event);
  const { reply, run, failure, provider }: Outcome = direct ? { reply: rendered.text } : await agentOutcome(ctx, subscription, rendered, message, payload);
  const silent = reply !== undefined && silencedReply(subscription, reply);
  const parts = reply === undefined ? undefined : replyParts(reply, subscription);
  if (json) {
    // `reply` as chat and log targets get it (findings listed); the findings and the unread-diff reason apart.
    ctx.out(JSON.stringify({
      subscription: name, event: filter, provider: provider ?? null, prompt: rendered.text, reply: parts ? flattenFindings(parts) : null, would_post: reply !== undefined && !silent,
      findings: parts?.findings ?? [], unread: parts?.unread ?? null, error: failure ? { code: failure.code, message: failure.message } : null, usage: run?.usage ?? null, transcript: run?.transcript ?? null, delivered: false,
    }, null, 2));
  } else {
    // A --payload is named as the service would classify it (its own event type, or `custom`), not by the filter.
    const how = direct ? 'with agent none: the rendered template is delivered as is, no model is called' : `with provider ${provider}`;
    const lines = [`Dry run of '${name}' on a ${payloadOption === undefined ? `sample ${filter}` : `--payload ${action ? `${event}.${action}` : event}`} event ${how} (nothing is delivered or recorded).`, '', 'Prompt:', rendered.text, ''];
    const routing = eventFilterReport(subscription.events, { source, event, ...(action ? { action } : {}) });
    if (routing) lines.push(routing.trimStart(), '');
    const ignored = loopGuardReport(payload);
    if (ignored) lines.push(ignored.trimStart(), '');
    if (run) lines.push(...transcriptLines(run.transcript), '');
    const usage = usageLine(run);
    if (usage) lines.push(usage);
    if (failure) lines.push(`Failed: ${failure.code}: ${failure.message}`);
    else if (parts) lines.push(...(silent ? ['Reply ([SILENT]: nothing would be posted):', flattenFindings(parts)] : replyPreviewLines(parts, subscription)));
    ctx.out(escapeTerminal(lines.join('\n')));
  }
  if (failure) process.exitCode = 1;
}
