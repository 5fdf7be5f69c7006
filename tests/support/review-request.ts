/**
 * A code-host delivery of a review, as the worker hands it over: a `pull_request.synchronize`
 * at a commit (GitHub) or the GitLab merge request fixture at one, delivered to the
 * `codehost_comment` target with the given reply.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../functions/core/config/types';
import type { DeliveryOutcome, DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { Source } from '../../functions/core/types';

/** GitHub `pull_request.synchronize` of octo/widgets#7 at `sha`. */
export const synchronize = (sha: string) => ({ action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha } } });

const mrFixture = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as { object_attributes: { last_commit: object } & Record<string, unknown> } & Record<string, unknown>;
/** GitLab's merge request fixture with its last commit at `sha`. */
export const mrAt = (sha: string) => ({ ...mrFixture, object_attributes: { ...mrFixture.object_attributes, last_commit: { ...mrFixture.object_attributes.last_commit, id: sha } } });

/** The `review` subscription's delivery of `reply` for the change at `sha`. */
export function reviewRequest(settings: Config['delivery'], reply: string, eventId: string, sha: string, source: Source = 'github'): DeliveryRequest {
  return {
    subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message: { v: 1, event_id: eventId, subscription: 'review', source, event: source === 'github' ? 'pull_request' : 'merge_request', delivery_id: 'd', received_at: '' },
    payload: source === 'github' ? synchronize(sha) : mrAt(sha), reply, settings, logger: jsonLogger(() => {}),
  };
}

export const deliverComment = (settings: Config['delivery'], request: DeliveryRequest): Promise<DeliveryOutcome> =>
  createDeliveryTargets(settings, async () => {}).codehost_comment.deliver(request);
