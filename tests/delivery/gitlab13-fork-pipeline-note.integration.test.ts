/**
 * A Pipeline Hook of a merge request from a fork (hunt 13, gitlab D1). GitLab runs the
 * pipeline of a fork's merge request in the fork (the source project): the hook's `project`
 * is the fork, while `merge_request.iid` is the iid in the TARGET project
 * (`merge_request.target_project_id`). The note goes to that merge request, not to `!iid` of
 * the fork (before, it did: another merge request, or a 404).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonLogger } from '../../functions/core/log';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { deliverComment } from '../support/review-request';

let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
});

const pipeline = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'pipeline.json'), 'utf8')) as Record<string, any>;
// Upstream project 1 (gitlab-org/gitlab-test); the fork is project 2 (alice/gitlab-test), where the pipeline ran.
const forkPipeline = {
  ...pipeline,
  project: { ...pipeline.project, id: 2, path_with_namespace: 'alice/gitlab-test', web_url: 'http://example.com/alice/gitlab-test' },
  merge_request: { ...pipeline.merge_request, iid: 7, source_project_id: 2, target_project_id: 1 },
};

test('the note about a fork merge request pipeline goes to the merge request in the target project', async () => {
  const settings = codehostDelivery(host, 1000);
  const request: DeliveryRequest = {
    subscription: { name: 'ci', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message: { v: 1, event_id: 'evt_fork1', subscription: 'ci', source: 'gitlab', event: 'pipeline', delivery_id: 'd', received_at: '' },
    payload: forkPipeline, reply: 'Pipeline failed: see job lint.', settings, logger: jsonLogger(() => {}),
  };
  const outcome = await deliverComment(settings, request);
  const posted = host.server.requests.filter((r) => r.method === 'POST').map((r) => r.url.split('?')[0]);
  expect({ outcome: outcome.status, posted }).toEqual({ outcome: 'delivered', posted: ['/api/v4/projects/1/merge_requests/7/notes'] });
});
