/** `codehost_comment` on GitHub: an issue/PR comment, or a commit comment for pushes. */
import type { CodehostSettings } from '../config/types';
import { commentMarker } from '../events/loop-guard';
import { commentText } from './mentions';
import { deliveryRequest, fitReply, postOnce, type HttpOptions } from './http';
import type { DeliveryOutcome, DeliveryRequest } from './target';

export const GITHUB_COMMENT_LIMIT = 65_536;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);
const sha = (v: unknown): string | undefined => (typeof v === 'string' && /^[0-9a-f]{7,40}$/.test(v) && !/^0+$/.test(v) ? v : undefined);

/** Where a GitHub event's comment goes: `issues/{n}/comments` or `commits/{sha}/comments`. */
export function githubCommentPath(event: string, payload: Obj): string | undefined {
  const repo = obj(payload.repository)?.full_name;
  if (typeof repo !== 'string') return undefined;
  const firstPr = (list: unknown) => num(obj(Array.isArray(list) ? list[0] : undefined)?.number);
  let number: number | undefined;
  let commit: string | undefined;
  switch (event) {
    case 'pull_request': case 'pull_request_review': case 'pull_request_review_comment': case 'pull_request_review_thread':
      number = num(obj(payload.pull_request)?.number);
      break;
    case 'issues': case 'issue_comment':
      number = num(obj(payload.issue)?.number);
      break;
    case 'push':
      commit = sha(payload.after) ?? sha(obj(payload.head_commit)?.id);
      break;
    case 'commit_comment':
      commit = sha(obj(payload.comment)?.commit_id);
      break;
    case 'status':
      commit = sha(payload.sha);
      break;
    case 'check_run': case 'check_suite': case 'workflow_run': {
      const run = obj(payload[event]);
      number = firstPr(run?.pull_requests);
      commit = number === undefined ? sha(run?.head_sha) : undefined;
      break;
    }
  }
  if (number !== undefined) return `/repos/${repo}/issues/${number}/comments`;
  if (commit !== undefined) return `/repos/${repo}/commits/${commit}/comments`;
  return undefined;
}

function nextLink(headers: Headers): string | undefined {
  return /<([^>]+)>;\s*rel="next"/.exec(headers.get('link') ?? '')?.[1];
}

export async function postGithubComment(request: DeliveryRequest, settings: CodehostSettings, http: Omit<HttpOptions, 'api'>): Promise<DeliveryOutcome> {
  const path = githubCommentPath(request.message.event, request.payload);
  if (!path) return { status: 'failed', retryable: false, code: 'nothing_to_comment', message: `A GitHub ${request.message.event} event names no pull request, issue or commit to comment on` };
  const marker = commentMarker(request.subscription.name, request.message.event_id);
  const headers = {
    authorization: `Bearer ${settings.token}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28',
    'user-agent': 'hookagent', 'content-type': 'application/json',
  };
  const options: HttpOptions = {
    ...http, api: 'GitHub',
    // GitHub signals primary rate limits with 403 (or 429) and x-ratelimit-remaining: 0.
    rateLimitWait: (status, h) => {
      if (status !== 403 && status !== 429) return undefined;
      const retryAfter = Number(h.get('retry-after'));
      if (Number.isFinite(retryAfter) && h.get('retry-after') !== null) return retryAfter * 1000;
      if (h.get('x-ratelimit-remaining') === '0') return Math.max(0, Number(h.get('x-ratelimit-reset')) * 1000 - Date.now());
      return status === 429 ? 60_000 : undefined;
    },
  };

  const find = async (): Promise<DeliveryOutcome | undefined> => {
    let url: string | undefined = `${settings.api_url}${path}?per_page=100`;
    for (let page = 0; url && page < 10; page++) {
      const listed = await deliveryRequest(url, { headers }, options);
      if (!listed.ok) return listed.failure;
      const comments = JSON.parse(listed.body) as Array<{ body?: string; html_url?: string }>;
      const existing = Array.isArray(comments) ? comments.find((c) => c.body?.includes(marker)) : undefined;
      if (existing) return { status: 'delivered', detail: `${existing.html_url ?? 'existing comment'} (already posted)` };
      url = nextLink(listed.headers);
    }
    return undefined;
  };
  const body = fitReply(commentText(request.reply, request.settings), GITHUB_COMMENT_LIMIT, `\n\n${marker}`);
  const post = async (): Promise<DeliveryOutcome> => {
    const posted = await deliveryRequest(`${settings.api_url}${path}`, { method: 'POST', headers, body: JSON.stringify({ body }) }, { ...options, attempts: 1 });
    if (!posted.ok) return posted.failure;
    const created = JSON.parse(posted.body) as { html_url?: string };
    return { status: 'delivered', detail: created.html_url ?? path };
  };
  return postOnce(find, post, http.sleep ? { sleep: http.sleep } : {});
}
