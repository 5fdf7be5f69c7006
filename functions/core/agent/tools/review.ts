/**
 * Read-only code-review tools over the pull/merge request an event is about:
 * `get_change`, `list_changed_files`, `get_change_diff` (whole, per file, or since the
 * last reviewed commit), `get_file`, `list_commits`, `get_ci_status`. Each caps its
 * output and says when it cut.
 */
import { HookError } from '../../errors';
import type { Tool } from '../tools';
import { changePath, changedFiles, getJson, headRead, inputOf, listAll, liveFiles, obj, openSubject, positiveLine, s, safeFilePath, safeRef, capText, answerText, wholeAtPin, MAX_FILES, type FileChange, type Opened } from './codehost';
import { gitlabCi } from './gitlab-ci';
import { lastReviewedCommit } from './since';

export { MAX_FILES } from './codehost';
export { LOG_TAIL } from './gitlab-ci';
export const MAX_COMMITS = 250;
export const DIFF_CAP = 20_000;
export const FILE_CAP = 20_000;
export const FILE_LINES = 400;


const none = { type: 'object', properties: {}, additionalProperties: false };

const fileLine = (f: FileChange) => `${f.status} ${f.path}${f.previous ? ` (from ${f.previous})` : ''}${f.additions !== undefined && Number.isFinite(f.additions) ? ` (+${f.additions} -${f.deletions ?? 0})` : ''}`;

/** The old name of a renamed file: the model needs it to read the removed (LEFT) lines. */
const renamedFrom = (f: FileChange) => (f.previous ? ` (renamed from ${f.previous})` : '');

function renderDiff(files: FileChange[], wanted: string | undefined, header: string, note: string): string {
  if (wanted !== undefined) {
    const file = files.find((f) => f.path === wanted || f.previous === wanted);
    if (!file) throw new HookError('tool_bad_input', `${wanted} is not among the changed files (call list_changed_files)`);
    return capText(`${header}--- ${file.path}${renamedFrom(file)}\n${file.patch ?? '(no textual diff: binary or too large for the API)'}`, DIFF_CAP, 'the rest of this file\'s diff is not shown; read the file with get_file') + note;
  }
  const parts: string[] = header ? [header] : [];
  let used = header.length;
  const skipped: string[] = [];
  for (const f of files) {
    const part = `--- ${f.path}${renamedFrom(f)}\n${f.patch ?? '(no textual diff: binary or too large for the API; read it with get_file)'}`;
    if (used + part.length > DIFF_CAP) {
      skipped.push(f.path);
      continue;
    }
    parts.push(part);
    used += part.length;
  }
  if (skipped.length > 0) parts.push(`…[cut at ${DIFF_CAP} characters: ${skipped.length} file(s) not shown; call get_change_diff with {"path": …} for: ${skipped.slice(0, 50).join(', ')}${skipped.length > 50 ? ', …' : ''}]`);
  return parts.join('\n') + note;
}

export const REVIEW_TOOLS: Record<string, Tool> = {
  get_change: {
    name: 'get_change',
    description: 'The pull/merge request: title, description, labels, author, base and head, draft, mergeable.',
    parameters: none,
    async run(_input, context) {
      const opened = openSubject(context, 'change');
      const c = await getJson<Record<string, unknown>>(opened, changePath(opened));
      const lines = opened.client.host === 'github'
        ? [
          `title: ${s(c.title)}`, `author: ${s(obj(c.user)?.login)}`, `state: ${s(c.state)}${c.draft ? ' (draft)' : ''}`,
          `base: ${s(obj(c.base)?.ref)} @ ${s(obj(c.base)?.sha)}`, `head: ${s(obj(c.head)?.ref)} @ ${s(obj(c.head)?.sha)}`,
          `labels: ${(Array.isArray(c.labels) ? c.labels : []).map((l) => s(obj(l)?.name)).join(', ')}`,
          `mergeable: ${s(c.mergeable ?? 'unknown')} (${s(c.mergeable_state)})`,
          `size: ${s(c.changed_files)} files, +${s(c.additions)} -${s(c.deletions)}, ${s(c.commits)} commits`,
        ]
        : [
          `title: ${s(c.title)}`, `author: ${s(obj(c.author)?.username)}`, `state: ${s(c.state)}${c.draft ? ' (draft)' : ''}`,
          `base: ${s(c.target_branch)} @ ${s(obj(c.diff_refs)?.base_sha)}`, `head: ${s(c.source_branch)} @ ${s(obj(c.diff_refs)?.head_sha ?? c.sha)}`,
          `labels: ${(Array.isArray(c.labels) ? c.labels : []).map((l) => (typeof l === 'string' ? l : s(obj(l)?.name))).join(', ')}`,
          `mergeable: ${s(c.detailed_merge_status ?? c.merge_status)}`,
        ];
      return `${lines.join('\n')}\n\n${capText(s(c.body ?? c.description), 8000, 'the rest of the description is not shown')}`;
    },
  },
  list_changed_files: {
    name: 'list_changed_files',
    description: `Every file the pull/merge request changes (up to ${MAX_FILES}), with status and line counts.`,
    parameters: none,
    async run(_input, context) {
      // The files as they are now (no line numbers here: findings are placed by get_change_diff's).
      const { files, note } = await liveFiles(openSubject(context, 'change'));
      return `${files.map(fileLine).join('\n')}${note}`;
    },
  },
  get_change_diff: {
    name: 'get_change_diff',
    description: 'The unified diff of the change, at the head this review reads (kept for the whole run, also after a push; record_finding\'s lines are this diff\'s). Give {"path": "…"} for one file (read large changes file by file). Give {"since_last_review": true} for only what changed since the commit named in the last hookagent review (falls back to the full diff after a force-push).',
    parameters: { type: 'object', properties: { path: { type: 'string' }, since_last_review: { type: 'boolean' } }, additionalProperties: false },
    async run(input, context) {
      const args = inputOf(input);
      const wanted = args.path === undefined ? undefined : safeFilePath(args.path);
      const opened = openSubject(context, 'change');
      // Every diff read is of the head the run's first one pinned (codehost.ts changedFiles):
      // findings are numbered in it, placed on it, and the sticky footer names it.
      if (args.since_last_review === true) {
        const since = await lastReviewedCommit(opened, context);
        if (since.files) return renderDiff(since.files, wanted, `${since.header}\n`, since.note ?? '');
        const { files, note } = await changedFiles(opened);
        return renderDiff(files, wanted, `${since.header}\n`, note);
      }
      if (wanted === undefined && opened.client.host === 'github') {
        // One request for the whole diff; GitHub refuses it (406) for very large changes: then file by file.
        const whole = await wholeAtPin(opened, () => opened.client.request(changePath(opened), { accept: 'application/vnd.github.diff' }));
        if (whole !== undefined) return capText(whole, DIFF_CAP, 'call list_changed_files, then get_change_diff with {"path": …} per file');
      }
      const { files, note } = await changedFiles(opened);
      return renderDiff(files, wanted, '', note);
    },
  },
  get_file: {
    name: 'get_file',
    description: `A file's text at a ref (default: the change's head), optionally lines start_line..end_line; at most ${FILE_LINES} lines per call, numbered.`,
    parameters: { type: 'object', required: ['path'], properties: { path: { type: 'string' }, ref: { type: 'string' }, start_line: { type: 'integer', minimum: 1 }, end_line: { type: 'integer', minimum: 1 } }, additionalProperties: false },
    async run(input, context) {
      const args = inputOf(input);
      const path = safeFilePath(args.path);
      const start = positiveLine(args.start_line, 'start_line') ?? 1;
      const end = positiveLine(args.end_line, 'end_line');
      if (end !== undefined && end < start) throw new HookError('tool_bad_input', 'end_line must not be before start_line');
      const opened = openSubject(context, 'change');
      const ref = args.ref === undefined ? await headRead(opened) : safeRef(args.ref);
      const encoded = path.split('/').map(encodeURIComponent).join('/');
      let text: string;
      if (opened.client.host === 'github') {
        const file = await getJson<Record<string, unknown>>(opened, `/contents/${encoded}?ref=${encodeURIComponent(ref)}`);
        if (file.type !== 'file') throw new HookError('tool_bad_input', `${path} is not a file`);
        text = file.encoding === 'base64' ? Buffer.from(s(file.content), 'base64').toString('utf8')
          : answerText(await opened.client.request(`/contents/${encoded}?ref=${encodeURIComponent(ref)}`, { accept: 'application/vnd.github.raw+json' }));
      } else {
        text = answerText(await opened.client.request(`/repository/files/${encodeURIComponent(path)}/raw?ref=${encodeURIComponent(ref)}`, { accept: 'text/plain' }));
      }
      const all = text.split('\n');
      const last = Math.min(all.length, end ?? all.length, start + FILE_LINES - 1);
      const shown = all.slice(start - 1, last).map((line, i) => `${start + i}\t${line}`).join('\n');
      const more = last < Math.min(all.length, end ?? all.length) ? `\n…[cut at line ${last} of ${all.length}; ask again with start_line ${last + 1}]` : '';
      return `${path} @ ${ref} (lines ${start}-${last} of ${all.length})\n${capText(shown, FILE_CAP, 'ask for fewer lines')}${more}`;
    },
  },
  list_commits: {
    name: 'list_commits',
    description: `The commits of the change, oldest first (up to ${MAX_COMMITS}).`,
    parameters: none,
    async run(_input, context) {
      const opened = openSubject(context, 'change');
      const { items, note } = await listAll<Record<string, unknown>>(opened, `${changePath(opened)}/commits`, MAX_COMMITS);
      const lines = opened.client.host === 'github'
        ? items.map((c) => `${s(c.sha).slice(0, 12)} ${s(obj(obj(c.commit)?.author)?.name)}: ${s(obj(c.commit)?.message).split('\n')[0]}`)
        : [...items].reverse().map((c) => `${s(c.id).slice(0, 12)} ${s(c.author_name)}: ${s(c.title)}`);
      return capText(`${items.length} commit(s)\n${lines.join('\n')}${note}`, DIFF_CAP, 'the list is not shown in full');
    },
  },
  get_ci_status: {
    name: 'get_ci_status',
    description: 'CI results for the change\'s head: GitHub check runs and commit statuses; GitLab\'s latest pipeline, its failed jobs and the tail of the first failed job\'s log (for a merge request from a fork, read in the fork).',
    parameters: none,
    async run(_input, context) {
      const opened = openSubject(context, 'change');
      return opened.client.host === 'github' ? githubCi(opened, await headRead(opened)) : gitlabCi(opened, context);
    },
  },
};

async function githubCi(opened: Opened, head: string): Promise<string> {
  const sha = encodeURIComponent(head);
  const runs = await getJson<{ total_count?: number; check_runs?: Array<Record<string, unknown>> }>(opened, `/commits/${sha}/check-runs?per_page=100`);
  const status = await getJson<{ state?: string; statuses?: Array<Record<string, unknown>> }>(opened, `/commits/${sha}/status`);
  const lines = [`commit ${decodeURIComponent(sha)}: combined status ${s(status.state)}`];
  for (const run of runs.check_runs ?? []) {
    const output = obj(run.output);
    lines.push(`check ${s(run.name)}: ${s(run.status)}${run.conclusion ? ` / ${s(run.conclusion)}` : ''}${output?.title ? ` — ${s(output.title)}` : ''}${run.conclusion === 'failure' && output?.summary ? `\n  ${capText(s(output.summary), 1500, 'summary cut')}` : ''}`);
  }
  if ((runs.total_count ?? 0) > (runs.check_runs?.length ?? 0)) lines.push(`…[${(runs.total_count ?? 0) - (runs.check_runs?.length ?? 0)} more check runs not shown]`);
  for (const st of status.statuses ?? []) lines.push(`status ${s(st.context)}: ${s(st.state)}${st.description ? ` — ${s(st.description)}` : ''}`);
  return capText(lines.join('\n'), DIFF_CAP, 'more CI results not shown');
}
