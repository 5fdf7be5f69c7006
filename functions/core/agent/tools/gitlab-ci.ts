/**
 * `get_ci_status` on GitLab: the merge request's latest pipeline, its failed jobs and the
 * tail of the first failed job's log. A merge request from a fork runs its pipelines in the
 * fork, its source project (GitLab docs, "Merge request pipelines > Use with forked
 * projects"): the target lists such a pipeline with the fork's `project_id`, and answers
 * 404 for its jobs. Its jobs and log are then read under the fork's project, a second scope
 * that only reads those two paths; the fork's id is the merge request's `source_project_id`
 * as GitLab answers it (`GET /merge_requests/:iid`), never the payload's. Whatever cannot be
 * read is said, and the status already read is still reported.
 */
import { HookError, isHookError } from '../../errors';
import { refused, type CodehostClient } from '../../delivery/codehost-api';
import type { ToolContext } from '../tools';
import { answerText, changePath, clientFor, getJson, listAll, s, type Opened } from './codehost';

export const LOG_TAIL = 4_000;

type Obj = Record<string, unknown>;

/** The only reads made under a fork: a pipeline's jobs and a job's log. */
const FORK_READS = /^\/pipelines\/\d+\/jobs(\?[^/]*)?$|^\/jobs\/\d+\/trace$/;

/** `client` limited to FORK_READS, GET only. */
function forkReads(client: CodehostClient): CodehostClient {
  const no = (path: string) => refused('unsafe_path', `GitLab: ${path} is not read under the source project`);
  return {
    ...client,
    request: async (path, init) => (FORK_READS.test(path) && (init?.method ?? 'GET') === 'GET' ? client.request(path, init) : no(path)),
    paginate: async (path, maxItems, accept) => (FORK_READS.test(path) ? client.paginate(path, maxItems, accept) : no(path)),
  };
}

const positiveId = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined);
const why = (error: unknown) => (isHookError(error) ? error.message : String(error));

/**
 * Where the pipeline's jobs are read: this project (`opened`), the fork (a client scoped to
 * it), or nowhere (why not). `pipelineProject`: the pipeline's `project_id`.
 */
async function jobsPlace(opened: Opened, context: ToolContext, pipelineProject: number | undefined): Promise<{ at: { client: CodehostClient }; fork?: number } | string> {
  if (pipelineProject === undefined || opened.subject.project === String(pipelineProject)) return { at: opened };
  let mr: Obj;
  try {
    mr = await getJson<Obj>(opened, changePath(opened));
  } catch (error) {
    return `the pipeline belongs to project ${pipelineProject}, and the merge request could not be read to tell which (${why(error)}): its jobs and logs were not read`;
  }
  const target = positiveId(mr.target_project_id) ?? positiveId(mr.project_id);
  if (target === pipelineProject) return { at: opened };
  const source = positiveId(mr.source_project_id);
  if (source !== pipelineProject) {
    return `the pipeline belongs to project ${pipelineProject}, neither this merge request's project nor its source project: its jobs and logs were not read`;
  }
  return { at: { client: forkReads(clientFor(context, { ...opened.subject, project: String(source) })) }, fork: source };
}

export async function gitlabCi(opened: Opened, context: ToolContext): Promise<string> {
  const pipelines = await getJson<Obj[]>(opened, `${changePath(opened)}/pipelines?per_page=5`);
  const latest = pipelines[0];
  if (!latest) return 'No pipeline has run for this merge request.';
  const id = Number(latest.id);
  if (!Number.isSafeInteger(id) || id < 1) throw new HookError('tool_bad_answer', 'GitLab answered a pipeline without a numeric id');
  const webUrl = typeof latest.web_url === 'string' && /^https?:\/\//.test(latest.web_url) ? ` ${latest.web_url}` : '';
  const lines = [`pipeline ${id}: ${s(latest.status)} at ${s(latest.sha).slice(0, 12)}${webUrl}`];
  const place = await jobsPlace(opened, context, positiveId(latest.project_id));
  if (typeof place === 'string') return [...lines, place].join('\n');
  const where = place.fork === undefined ? '' : ` (in the source project ${place.fork}, the fork this merge request comes from)`;
  let failed: Obj[];
  try {
    failed = (await listAll<Obj>(place.at, `/pipelines/${id}/jobs?scope[]=failed`, 100)).items;
  } catch (error) {
    const what = place.fork === undefined ? 'its failed jobs could not be read' : `its jobs and logs are in the source project ${place.fork} (the fork) and were not read`;
    return [...lines, `${what}: ${why(error)}`].join('\n');
  }
  for (const job of failed) lines.push(`failed job ${s(job.name)} (stage ${s(job.stage)})${where}`);
  const first = failed.find((j) => positiveId(Number(j.id)) !== undefined);
  if (first) {
    try {
      const log = answerText(await place.at.client.request(`/jobs/${Number(first.id)}/trace`, { accept: 'text/plain' }));
      const tail = log.length > LOG_TAIL ? `…[log cut: only the last ${LOG_TAIL} of ${log.length} characters]\n${log.slice(-LOG_TAIL)}` : log;
      lines.push(`\nlog of ${s(first.name)}:\n${tail}`);
    } catch (error) {
      lines.push(`the log of ${s(first.name)} could not be read: ${why(error)}`);
    }
  }
  return lines.join('\n');
}
