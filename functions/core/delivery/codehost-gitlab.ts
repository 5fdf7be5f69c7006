/** `codehost_comment` on GitLab: a note on the MR or issue, or a commit comment. */
import type { CodehostSettings } from '../config/types';
import { commentMarker } from '../events/loop-guard';
import { commentText } from './mentions';
import { deliveryRequest, fitReply, postOnce, type HttpOptions } from './http';
import type { DeliveryOutcome, DeliveryRequest } from './target';

export const GITLAB_NOTE_LIMIT = 1_000_000;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);
const id = (v: unknown): string | undefined => (typeof v === 'number' || (typeof v === 'string' && v !== '') ? String(v) : undefined);
const sha = (v: unknown): string | undefined => (typeof v === 'string' && /^[0-9a-f]{7,40}$/.test(v) && !/^0+$/.test(v) ? v : undefined);

export interface GitlabPlace {
  /** Path under the API for listing and posting. */
  path: string;
  /** Notes take `body`; commit comments take `note`. */
  field: 'body' | 'note';
}

export function gitlabCommentPlace(payload: Obj): GitlabPlace | undefined {
  const project = id(obj(payload.project)?.id) ?? id(payload.project_id);
  if (!project) return undefined;
  const base = `/projects/${encodeURIComponent(project)}`;
  const attributes = obj(payload.object_attributes);
  const mr = (iid: string | undefined) => (iid ? { path: `${base}/merge_requests/${iid}/notes`, field: 'body' as const } : undefined);
  const issue = (iid: string | undefined) => (iid ? { path: `${base}/issues/${iid}/notes`, field: 'body' as const } : undefined);
  const commit = (s: string | undefined) => (s ? { path: `${base}/repository/commits/${s}/comments`, field: 'note' as const } : undefined);
  switch (payload.object_kind) {
    case 'merge_request':
      return mr(id(attributes?.iid));
    case 'issue': case 'work_item':
      return issue(id(attributes?.iid));
    case 'note': {
      const type = attributes?.noteable_type;
      if (type === 'MergeRequest') return mr(id(obj(payload.merge_request)?.iid));
      if (type === 'Issue') return issue(id(obj(payload.issue)?.iid));
      if (type === 'Commit') return commit(sha(obj(payload.commit)?.id) ?? sha(attributes?.commit_id));
      return undefined;
    }
    case 'push': case 'tag_push':
      return commit(sha(payload.checkout_sha) ?? sha(payload.after));
    case 'pipeline':
      return mr(id(obj(payload.merge_request)?.iid)) ?? commit(sha(attributes?.sha));
    default:
      return undefined;
  }
}

export async function postGitlabComment(request: DeliveryRequest, settings: CodehostSettings, http: Omit<HttpOptions, 'api'>): Promise<DeliveryOutcome> {
  const place = gitlabCommentPlace(request.payload);
  if (!place) return { status: 'failed', retryable: false, code: 'nothing_to_comment', message: `A GitLab ${request.message.event} event names no merge request, issue or commit to comment on` };
  const marker = commentMarker(request.subscription.name, request.message.event_id);
  const headers = { 'private-token': settings.token, 'content-type': 'application/json', accept: 'application/json' };
  const options: HttpOptions = { ...http, api: 'GitLab' };
  const listQuery = place.field === 'body' ? '?per_page=100&sort=desc&order_by=created_at' : '?per_page=100';
  const find = async (): Promise<DeliveryOutcome | undefined> => {
    const listed = await deliveryRequest(`${settings.api_url}${place.path}${listQuery}`, { headers }, options);
    if (!listed.ok) return listed.failure;
    const notes = JSON.parse(listed.body) as Array<{ id?: number; body?: string; note?: string }>;
    const existing = Array.isArray(notes) ? notes.find((n) => (n.body ?? n.note ?? '').includes(marker)) : undefined;
    return existing ? { status: 'delivered', detail: `${place.path}${existing.id ? `#${existing.id}` : ''} (already posted)` } : undefined;
  };
  const text = fitReply(commentText(request.reply, request.settings), GITLAB_NOTE_LIMIT, `\n\n${marker}`);
  const post = async (): Promise<DeliveryOutcome> => {
    const posted = await deliveryRequest(`${settings.api_url}${place.path}`, { method: 'POST', headers, body: JSON.stringify({ [place.field]: text }) }, { ...options, attempts: 1 });
    if (!posted.ok) return posted.failure;
    const created = JSON.parse(posted.body) as { id?: number };
    return { status: 'delivered', detail: `${place.path}${created.id ? `#${created.id}` : ''}` };
  };
  return postOnce(find, post, http.sleep ? { sleep: http.sleep } : {});
}
