/**
 * `codehost_comment` on GitHub and GitLab: where the comment goes (from the validated
 * subject), and how it is posted. In `sticky` mode (the default for pull/merge requests)
 * a subscription keeps ONE comment per pull/merge request or issue, edited in place
 * (GitHub `PATCH …/issues/comments/{id}`, GitLab `PUT …/notes/{id}`), found again by its
 * hidden sticky marker, recreated when deleted; its footer names the commit reviewed and
 * when (the head the run read the diff at; without one, the event's commit, else the head
 * the host shows now). The review of an older push delivered after a newer one's does not replace
 * it, nor does the review of a commit a force-push removed (live-change.ts superseded).
 * In `new` mode every event gets its own comment. Either way the event's own marker makes
 * a redelivery or a retry find what was already posted instead of posting twice. A sticky comment's find-then-create/edit holds the subject's lease
 * (subject-lease.ts), so concurrent events on one pull request do not each create one.
 */
import type { CodehostSettings } from '../config/types';
import { childLogger } from '../log';
import type { LeaseStore } from '../ports';
import { commentMarker, MARKER_PREFIX, reviewedCommitOf, reviewedMarker, stickyMarker } from '../events/loop-guard';
import { subjectOf, type Subject } from '../events/subject';
import { codehostClient, isFailure, type CodehostClient } from './codehost-api';
import { postInlineFindings } from './codehost-review';
import { liveChange, superseded, type Superseded } from './live-change';
import { searchMarkers, textOf, type Comment } from './marker-search';
import { installationIdOf } from './github-app';
import { foldedFinding, replyParts, unreadNote } from './findings';
import { fitReply, postOnce, type HttpOptions } from './http';
import { commentText, replyClosers } from './mentions';
import { underSubjectLease } from './subject-lease';
import type { DeliveryOutcome, DeliveryRequest } from './target';

export const GITHUB_COMMENT_LIMIT = 65_536;
export const GITLAB_NOTE_LIMIT = 1_000_000;

export interface CommentPlace {
  /** List and create, under the client's scope. */
  path: string;
  /** Notes and GitHub comments take `body`; GitLab commit comments take `note`. */
  field: 'body' | 'note';
  /** Where comment `id` is edited; absent when the place has no editable comments (commit comments). */
  edit?: { method: 'PATCH' | 'PUT'; path: (id: number) => string };
}

/** GitHub: `issues/{n}/comments` (pull requests and issues) or `commits/{sha}/comments`. */
export function githubCommentPlace(subject: Subject): CommentPlace | undefined {
  if (subject.host !== 'github' || !subject.repo) return undefined;
  if (subject.number !== undefined && (subject.kind === 'pull_request' || subject.kind === 'issue')) {
    return { path: `/issues/${subject.number}/comments`, field: 'body', edit: { method: 'PATCH', path: (id) => `/issues/comments/${id}` } };
  }
  if (subject.kind === 'commit' && subject.commit) return { path: `/commits/${subject.commit}/comments`, field: 'body' };
  return undefined;
}

/** GitLab: notes on the merge request or issue, or a commit comment. */
export function gitlabCommentPlace(subject: Subject): CommentPlace | undefined {
  if (subject.host !== 'gitlab' || !subject.project) return undefined;
  if (subject.number !== undefined && (subject.kind === 'merge_request' || subject.kind === 'issue')) {
    const notes = `/${subject.kind === 'merge_request' ? 'merge_requests' : 'issues'}/${subject.number}/notes`;
    return { path: notes, field: 'body', edit: { method: 'PUT', path: (id) => `${notes}/${id}` } };
  }
  if (subject.kind === 'commit' && subject.commit) return { path: `/repository/commits/${subject.commit}/comments`, field: 'note' };
  return undefined;
}

export function subjectOfRequest(request: DeliveryRequest): Subject {
  return subjectOf(request.message.source, request.message.event, request.payload, request.message.event_id);
}

/** Sticky unless the subscription says `new`; only pull/merge requests are sticky by default. */
export function commentMode(request: DeliveryRequest, subject: Subject): 'sticky' | 'new' {
  const mode = request.subscription.comment_mode;
  if (mode) return mode;
  return subject.kind === 'pull_request' || subject.kind === 'merge_request' ? 'sticky' : 'new';
}

/** The footer of a sticky comment: the commit reviewed and when, and the hidden markers. */
export function stickyFooter(subscription: string, eventId: string, subject: Subject, now: Date, earlier: string[] = []): string {
  const when = `${now.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const commit = subject.commit ? ` · reviewed \`${subject.commit.slice(0, 12)}\`` : '';
  // The markers of the events this comment answered before stay, so a late retry of one of them finds it.
  const kept = earlier.filter((m) => m !== commentMarker(subscription, eventId)).slice(-STICKY_EVENT_MEMORY);
  return `\n\n---\n<sub>hookagent · ${subscription}${commit} · ${when}</sub>\n${commentMarker(subscription, eventId)}\n${kept.map((m) => `${m}\n`).join('')}${subject.commit ? `${reviewedMarker(subject.commit)}\n` : ''}${stickyMarker(subscription)}`;
}

/** How many earlier events' markers a sticky comment keeps. */
export const STICKY_EVENT_MEMORY = 20;

/** The event markers of `subscription` in a comment body, oldest first. */
function eventMarkersIn(body: string, subscription: string): string[] {
  const sticky = stickyMarker(subscription);
  return (body.match(/<!-- hookagent:[^\s>]+ -->/g) ?? []).filter((m) => m.startsWith(`${MARKER_PREFIX}${subscription}:`) && m !== sticky);
}

export interface CommentOptions {
  now?: () => Date;
  /** Serialises sticky comments per (subscription, subject) across workers; without it they are not serialised. */
  leases?: LeaseStore;
}

/** How long a sticky delivery waits for another one on the same subject, in delivery timeouts. */
const STICKY_WAIT_TIMEOUTS = 3;

export async function postCodehostComment(request: DeliveryRequest, settings: Partial<Record<'github' | 'gitlab', CodehostSettings>>, http: Omit<HttpOptions, 'api'>, options: CommentOptions = {}): Promise<DeliveryOutcome> {
  const now = options.now ?? (() => new Date());
  const subject = subjectOfRequest(request);
  const client = codehostClient(subject, settings, { ...http, logger: childLogger(request.logger, { event_id: request.message.event_id, subscription: request.subscription.name }) }, { ...(installationIdOf(request.payload) === undefined ? {} : { installationId: installationIdOf(request.payload) as number }) });
  if (isFailure(client)) {
    request.logger.warn('codehost_comment_refused', { event_id: request.message.event_id, subscription: request.subscription.name, code: client.failure.code });
    return client.failure;
  }
  const place = client.host === 'github' ? githubCommentPlace(subject) : gitlabCommentPlace(subject);
  const hostName = client.host === 'github' ? 'GitHub' : 'GitLab';
  if (!place) return { status: 'failed', retryable: false, code: 'nothing_to_comment', message: `A ${hostName} ${request.message.event} event names no ${client.host === 'github' ? 'pull request' : 'merge request'}, issue or commit to comment on` };
  const sticky = commentMode(request, subject) === 'sticky' && place.edit !== undefined;
  const name = request.subscription.name;
  const marker = commentMarker(name, request.message.event_id);
  const limit = client.host === 'github' ? GITHUB_COMMENT_LIMIT : GITLAB_NOTE_LIMIT;
  const at = now();
  // No agent ran for `--agent none`: the reply is the rendered template, payload text, and carries no findings.
  const { text: rawReply, findings, unread, readHead } = replyParts(request.reply, request.subscription);
  const live = liveChange(client, subject);
  /**
   * The commit a sticky footer names: the head the run read the diff at (its findings are
   * numbered in that diff); without one, the event's, else (a comment asking for a review)
   * the head now. A run that could not read the diff reviewed none. Without one, the last
   * real review's (`earlier`) stays.
   */
  const reviewedCommit = async (earlier: string | undefined): Promise<string | undefined> =>
    (unread ? undefined : readHead ?? subject.commit ?? (await live()).head) ?? earlier;
  // Sticky: the footer is set by find(), which postOnce runs before any post.
  let suffix = `\n\n${marker}`;
  // @mentions and issue/MR references from payload or model text are made inert unless delivery.codehost.allow_mentions (mentions.ts).
  const replyText = commentText(rawReply, request.settings);
  let notesText = '';
  const compose = () => {
    const notes = notesText ? sealed(`\n\n${commentText(notesText, request.settings)}`) : '';
    // A reply too long for the host is cut before the findings notes, not through them (they
    // hold the findings that are nowhere else), unless the notes alone nearly fill the comment.
    if (notes && notes.length + suffix.length <= limit / 2) return fitSealed(replyText, limit, `${notes}${suffix}`);
    return fitSealed(`${replyText}${notes}`, limit, suffix);
  };
  let inlineDone = findings.length === 0;
  if (inlineDone && unread) notesText = unreadNote(unread);
  /** Inline findings first (once), so those that cannot be placed go into the summary. */
  const placeFindings = async () => {
    if (inlineDone) return;
    inlineDone = true;
    const inline = await postInlineFindings(client, subject, name, marker, findings, { live, ...(readHead ? { read: readHead } : {}), sleep: http.sleep, maxWaitMs: http.maxWaitMs });
    request.logger.info('codehost_findings', { event_id: request.message.event_id, subscription: name, posted: inline.posted, repeated: inline.skipped, folded: inline.folded.length });
    const notes: string[] = [];
    const on = inline.placedOn;
    if (inline.posted > 0) notes.push(`${inline.posted} finding(s) are posted as inline comments on the diff${on ? ` of \`${on.read.slice(0, 12)}\`, the commit reviewed: the change moved on to \`${on.head.slice(0, 12)}\` while the review ran, and a comment whose line changed since shows as outdated` : ''}.`);
    // This comment replaces the last summary: findings still standing inline from an earlier review are named too.
    if (inline.skipped > 0) notes.push(`${inline.skipped} finding(s) were already posted as inline comments on the same lines by an earlier review.`);
    if (unread) notes.push(unreadNote(unread));
    if (inline.folded.length > 0) notes.push(`**Findings not on changed lines**\n${inline.folded.map(({ finding, why }) => foldedFinding(finding, why)).join('\n')}`);
    notesText = notes.join('\n\n');
  };
  let stickyId: number | undefined;
  const detail = (c: Comment | undefined) => c?.html_url ?? `${place.path}${c?.id ? `#${c.id}` : ''}`;

  const find = async (): Promise<DeliveryOutcome | undefined> => {
    const searched = await searchMarkers(client, place.path, client.host === 'gitlab' && place.field === 'body', marker, sticky ? stickyMarker(name) : undefined);
    if (isFailure(searched)) return searched.failure;
    if (searched.event) return { status: 'delivered', detail: `${detail(searched.event)} (already posted)` };
    // Not found in a thread too long to read whole: a duplicate may follow; say so.
    if (searched.truncated) request.logger.warn('codehost_marker_search_truncated', { event_id: request.message.event_id, subscription: name, read: searched.read, why: searched.truncated });
    const found = searched.sticky;
    stickyId = found?.id;
    if (!sticky) return undefined;
    const earlier = found ? reviewedCommitOf(textOf(found)) : undefined;
    // Judged by the commit the run read (a comment asking for a review names none; a push before the run is reviewed in it).
    const reviewed = { ...subject, commit: readHead ?? subject.commit };
    const kept = found && earlier ? await superseded(client, reviewed, earlier, live) : undefined;
    if (kept && earlier) {
      // Runs of two pushes overlap and the older (or force-pushed-away) one finished last: its review (and its inline findings) would replace the newer one.
      request.logger.info('codehost_superseded', { event_id: request.message.event_id, subscription: name, event_commit: reviewed.commit, reviewed: earlier, why: kept });
      return { status: 'delivered', detail: `${detail(found)} (not replaced: ${keptWhy(kept, earlier, reviewed.commit, (await live()).head)})` };
    }
    const commit = await reviewedCommit(earlier);
    suffix = stickyFooter(name, request.message.event_id, { ...subject, commit }, at, found ? eventMarkersIn(textOf(found), name) : []);
    return undefined;
  };
  const create = async (): Promise<DeliveryOutcome> => {
    const posted = await client.request(place.path, { method: 'POST', body: { [place.field]: compose() }, attempts: 1 });
    if (!posted.ok) return posted.failure;
    return { status: 'delivered', detail: detail(safeJson(posted.body)) };
  };
  const post = async (): Promise<DeliveryOutcome> => {
    await placeFindings();
    if (stickyId === undefined || !place.edit) return create();
    const edited = await client.request(place.edit.path(stickyId), { method: place.edit.method, body: { body: compose() }, attempts: 1 });
    // Deleted since it was listed: post a new one.
    if (!edited.ok && edited.failure.code === 'http_404') return create();
    if (!edited.ok) return edited.failure;
    return { status: 'delivered', detail: `${detail(safeJson(edited.body))} (edited)` };
  };
  const deliver = () => postOnce(find, post, http.sleep ? { sleep: http.sleep } : {});
  if (!sticky || !options.leases) return deliver();
  return underSubjectLease({ leases: options.leases, subscription: name, subjectKey: subject.key, waitMs: STICKY_WAIT_TIMEOUTS * http.timeoutMs, logger: request.logger }, deliver);
}

/** Why a sticky comment that reviews `reviewed` does not take the review of `event`, for the outcome's detail. */
function keptWhy(why: Superseded, reviewed: string, event: string | undefined, head: string | undefined): string {
  const [r, e, h] = [reviewed, event, head].map((sha) => sha?.slice(0, 12));
  if (why === 'gone') return `this event's ${e} is no longer in the pull request; the head is ${h}`;
  return `it already reviews ${r}, ${why === 'head' ? `the head now; this event's ${e} is not` : `newer than this event's ${e}`}`;
}

/** Text followed by what closes the blocks it left open (mentions.ts replyClosers). */
const sealed = (text: string) => `${text}${replyClosers(text)}`;

/**
 * fitReply, with the reply's open blocks closed after the cut, so an unclosed `<!--`,
 * `<details>` or fence in payload or model text can neither hide nor fold what hookagent
 * writes after it (findings notes, the unread-diff warning, the footer), and a cut cannot
 * leave one open either. Nothing changes for a reply that leaves nothing open.
 */
export function fitSealed(reply: string, limit: number, tail: string): string {
  const whole = sealed(reply);
  if (whole.length + tail.length <= limit) return `${whole}${tail}`;
  let room = whole.length - reply.length + tail.length + 16;
  for (let tries = 0; ; tries++) {
    const cut = fitReply(reply, Math.max(0, limit - room), '');
    const closers = replyClosers(cut);
    if (cut.length + closers.length + tail.length <= limit || tries === 3) return `${cut}${closers}${tail}`;
    room = closers.length + tail.length + 16;
  }
}

function safeJson(text: string): Comment | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' ? (value as Comment) : undefined;
  } catch {
    return undefined;
  }
}

export type { CodehostClient };
