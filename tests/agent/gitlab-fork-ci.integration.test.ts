/**
 * `get_ci_status` on a GitLab merge request from a fork. GitLab runs its merge request
 * pipelines in the fork, the source project (docs "Merge request pipelines > Use with
 * forked projects": "It's created and runs in the fork (source) project, not the parent
 * (target) project"). The target's `GET /merge_requests/:iid/pipelines` lists them with the
 * fork's `project_id`; `GET /projects/<target>/pipelines/:id/jobs` is 404. The status read
 * is reported; the jobs and the log are read under the fork's project, whose id comes from
 * `GET /merge_requests/:iid` (never from the payload), or said to be unread.
 */
import { BUILTIN_TOOLS, type ToolContext } from '../../functions/core/agent/tools';
import type { QueueMessage } from '../../functions/core/types';
import { codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';
import { mrAt } from '../support/review-request';

const HEAD = 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7';
const TARGET = '/api/v4/projects/1';
const FORK_ID = 15;
const FORK = `/api/v4/projects/${FORK_ID}`;
const WEB_URL = 'https://gitlab.example.com/contributor/gitlab-test/-/pipelines/901';
let host: FakeCodehost;
/** Whether the token can read the fork's jobs. */
let forkReadable = true;
useFakeCodehost((started) => {
  host = started;
});
beforeEach(() => {
  forkReadable = true;
  host.extra = (req, res, url) => {
    const p = url.pathname;
    if (req.method !== 'GET') return false;
    if (p === `${TARGET}/merge_requests/1`) return sendJson(res, 200, { iid: 1, project_id: 1, target_project_id: 1, source_project_id: FORK_ID, sha: HEAD }), true;
    if (p === `${TARGET}/merge_requests/1/pipelines`) {
      return sendJson(res, 200, [{ id: 901, iid: 3, project_id: FORK_ID, sha: HEAD, ref: 'refs/merge-requests/1/head', status: 'failed', source: 'merge_request_event', web_url: WEB_URL }]), true;
    }
    // The pipeline is the fork's: the target project does not know it.
    if (p.startsWith(`${TARGET}/pipelines/901`)) return sendJson(res, 404, { message: '404 Not found' }), true;
    if (p.startsWith(`${FORK}/`) && !forkReadable) return sendJson(res, 404, { message: '404 Project Not Found' }), true;
    if (p === `${FORK}/pipelines/901/jobs`) return sendJson(res, 200, [{ id: 7001, name: 'rspec', stage: 'test', status: 'failed' }]), true;
    if (p === `${FORK}/jobs/7001/trace`) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('Failure: expected 1 got 2');
      return true;
    }
    return false;
  };
});

const message: QueueMessage = { v: 1, event_id: 'e1', subscription: 'review', source: 'gitlab', event: 'merge_request', delivery_id: 'd', received_at: '' };
function context(): ToolContext {
  const payload = mrAt(HEAD);
  // The payload names another project: only the API's answer counts.
  (payload.object_attributes as Record<string, unknown>).source_project_id = 99;
  return { message, payload, delivery: codehostDelivery(host, 1000), signal: AbortSignal.timeout(5000) };
}
const paths = () => host.server.requests.map((r) => new URL(r.url, host.url).pathname);

test('get_ci_status on a merge request from a fork reports its pipeline, and its failed jobs and log read under the fork', async () => {
  const out = await BUILTIN_TOOLS.get_ci_status!.run({}, context());
  expect(out).toContain('pipeline 901: failed at da1560886d4f');
  expect(out).toContain(WEB_URL);
  expect(out).toContain(`source project ${FORK_ID}`);
  expect(out).toContain('failed job rspec (stage test)');
  expect(out).toContain('Failure: expected 1 got 2');
  // Only reads under the fork, and only its pipeline's jobs and the job's log; the payload's id is not used.
  const forkPaths = paths().filter((p) => p.startsWith(`${FORK}/`));
  expect(forkPaths).toEqual([`${FORK}/pipelines/901/jobs`, `${FORK}/jobs/7001/trace`]);
  expect(host.server.requests.filter((r) => new URL(r.url, host.url).pathname.startsWith(`${FORK}/`)).every((r) => r.method === 'GET')).toBe(true);
  expect(paths().some((p) => p.startsWith('/api/v4/projects/99'))).toBe(false);
  expect(paths().some((p) => p.startsWith(`${TARGET}/pipelines/`))).toBe(false);
});

test('a fork the token cannot read: the status is still reported, and the answer says the jobs and logs were not read', async () => {
  forkReadable = false;
  const out = await BUILTIN_TOOLS.get_ci_status!.run({}, context());
  expect(out).toContain('pipeline 901: failed at da1560886d4f');
  expect(out).toContain(WEB_URL);
  expect(out).toMatch(new RegExp(`jobs and logs are in the source project ${FORK_ID}.*not read.*404`, 's'));
});

test('a jobs list GitLab refuses in the merge request\'s own project does not lose the status already read', async () => {
  host.extra = (req, res, url) => {
    if (url.pathname === `${TARGET}/merge_requests/1/pipelines`) return sendJson(res, 200, [{ id: 55, project_id: 1, sha: HEAD, status: 'failed' }]), true;
    if (url.pathname === `${TARGET}/pipelines/55/jobs`) return sendJson(res, 404, { message: '404 Not found' }), true;
    return false;
  };
  const out = await BUILTIN_TOOLS.get_ci_status!.run({}, context());
  expect(out).toContain('pipeline 55: failed at da1560886d4f');
  expect(out).toMatch(/failed jobs could not be read.*404/);
});
