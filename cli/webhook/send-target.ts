/**
 * Where `webhook test --send` may post, and what: the serve of this config dir (hunt 5 D9),
 * and never a built-in sample to a subscription that would comment on the sample's real
 * repository (hunt 5 D4).
 */
import { HookError } from '../../functions/core/errors';
import type { Subscription } from '../../functions/core/types';
import { baseUrl, dataDir, type CliContext } from '../context';
import { commandName } from '../invocation';
import { runningServeUrl } from '../local/config-source';

/**
 * `--url`, else where the service of this configuration answers: the URL the serve running
 * on this config dir's data published, or a stage's `webhooks.public_url`. Without one,
 * 127.0.0.1:8644 may be another config dir's serve, which answers for other subscriptions.
 */
export function serviceUrl(ctx: CliContext, option: string | undefined): string {
  if (option !== undefined) return option.replace(/\/+$/, '');
  if (ctx.deployment) {
    if (ctx.config.webhooks.public_url !== undefined) return baseUrl(ctx.config, ctx.configDir).replace(/\/+$/, '');
    throw new HookError('service_unreachable', `Pass --url with the API URL of stage '${ctx.deployment.stage}' ('${commandName()} status --stage ${ctx.deployment.stage}' prints it), or set webhooks.public_url in config.yaml`);
  }
  const published = runningServeUrl(dataDir(ctx.configDir));
  if (published) return published;
  throw new HookError('service_unreachable', `No serve is running for ${ctx.configDir}: start it with '${commandName()} serve', or pass --url <where the service listens>`);
}

/** The repository or project a payload names (GitHub `repository.full_name`, GitLab `project.path_with_namespace`). */
function repositoryOf(payload: Record<string, unknown>): string | undefined {
  const repository = payload.repository as { full_name?: unknown } | undefined;
  const project = payload.project as { path_with_namespace?: unknown } | undefined;
  const name = repository?.full_name ?? project?.path_with_namespace;
  return typeof name === 'string' ? name : undefined;
}

/**
 * The built-in samples are real events of real repositories (Codertocat/Hello-World for
 * GitHub's): codehost_comment would post there with the user's token, and fail (403/404)
 * for a token limited to the user's own repositories. Refused before anything is sent, for
 * the subscription tested and for every other one the sample fans out to (`tested` names the
 * subscription `webhook test` was given).
 */
export function refuseStrangersRepository(subscription: Subscription, sample: { body: string; headers: Record<string, string> }, tested = subscription.name): void {
  if (!subscription.deliver.includes('codehost_comment')) return;
  const payload = JSON.parse(sample.body) as Record<string, unknown>;
  const repository = repositoryOf(payload);
  if (!repository) return;
  const event = sample.headers['x-github-event'] ?? sample.headers['x-event-type'] ?? (typeof payload.object_kind === 'string' ? payload.object_kind : 'sample');
  const action = typeof payload.action === 'string' ? `.${payload.action}` : '';
  const name = tested;
  const who = subscription.name === tested ? `'${name}' delivers` : `'${subscription.name}', which takes this event too, delivers`;
  throw new HookError('bad_option', [
    `Not sent: the built-in sample is a ${event}${action} event of ${repository}, a real repository: ${who} to codehost_comment, so the worker would comment there with your token.`,
    `To check the whole path, pass --payload <file> with one of your own deliveries (GitHub: the webhook's Recent Deliveries, its Payload tab; GitLab: the webhook's Recent events, its Request body): the comment goes where that event came from.`,
    `To check the prompt and the agent's reply without delivering anything, run '${commandName()} webhook test ${name} --dry-run'.`,
  ].join('\n'));
}
