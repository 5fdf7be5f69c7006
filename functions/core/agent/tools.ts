/**
 * Read-only tools the agent may call, by name. A skill lists the tools it may use; the
 * loop offers only those and refuses any other call. Outputs are capped before they reach
 * the model.
 */
import type { Config } from '../config/types';
import { HookError } from '../errors';
import type { QueueMessage } from '../types';
import type { ToolSpec } from './conversation';

export const TOOL_OUTPUT_CAP = 20_000;

export interface ToolContext {
  message: QueueMessage;
  payload: Record<string, unknown>;
  delivery: Config['delivery'];
  signal: AbortSignal;
}

export interface Tool extends ToolSpec {
  run(input: unknown, context: ToolContext): Promise<string>;
}

export function capToolOutput(text: string): string {
  return text.length > TOOL_OUTPUT_CAP ? `${text.slice(0, TOOL_OUTPUT_CAP)}\n…[truncated: ${text.length - TOOL_OUTPUT_CAP} more characters]` : text;
}

interface Change {
  host: 'github' | 'gitlab';
  apiUrl: string;
  token: string;
  /** GitHub: `repos/{owner}/{repo}/pulls/{n}`; GitLab: `projects/{id}/merge_requests/{iid}`. */
  path: string;
}

const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/** The pull/merge request an event is about, with the API to read it. */
function changeOf(context: ToolContext): Change {
  const p = context.payload;
  if (context.message.source === 'gitlab' || p.object_kind !== undefined) {
    const settings = context.delivery.codehost.gitlab;
    if (!settings) throw new HookError('tool_unconfigured', 'delivery.codehost.gitlab is not configured');
    const project = obj(p.project)?.id ?? p.project_id;
    const mr = p.object_kind === 'merge_request' ? obj(p.object_attributes) : obj(p.merge_request);
    if (project === undefined || mr?.iid === undefined) throw new HookError('tool_no_change', 'This event names no merge request');
    return { host: 'gitlab', apiUrl: settings.api_url, token: settings.token, path: `projects/${encodeURIComponent(String(project))}/merge_requests/${String(mr.iid)}` };
  }
  const settings = context.delivery.codehost.github;
  if (!settings) throw new HookError('tool_no_change', 'delivery.codehost.github is not configured');
  const repo = obj(p.repository)?.full_name;
  const number = obj(p.pull_request)?.number ?? (obj(obj(p.issue)?.pull_request) ? obj(p.issue)?.number : undefined);
  if (typeof repo !== 'string' || number === undefined) throw new HookError('tool_no_change', 'This event names no pull request');
  return { host: 'github', apiUrl: settings.api_url, token: settings.token, path: `repos/${repo}/pulls/${String(number)}` };
}

async function get(change: Change, path: string, accept: string, signal: AbortSignal): Promise<string> {
  const headers: Record<string, string> = change.host === 'github'
    ? { authorization: `Bearer ${change.token}`, accept, 'x-github-api-version': '2022-11-28', 'user-agent': 'hookagent' }
    : { 'private-token': change.token, accept };
  const response = await fetch(`${change.apiUrl}/${path}`, { headers, signal });
  const text = await response.text();
  if (!response.ok) {
    let detail = text.slice(0, 200);
    try {
      detail = String((JSON.parse(text) as { message?: unknown }).message ?? detail);
    } catch {
      // Not JSON: keep the start of the body.
    }
    throw new HookError('tool_http_error', `${change.host} answered ${response.status}: ${detail}`);
  }
  return text;
}

const noArguments = { type: 'object', properties: {}, additionalProperties: false };

export const BUILTIN_TOOLS: Record<string, Tool> = {
  get_change_diff: {
    name: 'get_change_diff',
    description: 'The unified diff of the pull request or merge request this event is about.',
    parameters: noArguments,
    async run(_input, context) {
      const change = changeOf(context);
      if (change.host === 'github') return get(change, change.path, 'application/vnd.github.diff', context.signal);
      const diffs = JSON.parse(await get(change, `${change.path}/diffs?per_page=100`, 'application/json', context.signal)) as Array<{ new_path?: string; diff?: string }>;
      return diffs.map((d) => `--- ${d.new_path ?? ''}\n${d.diff ?? ''}`).join('\n');
    },
  },
  list_changed_files: {
    name: 'list_changed_files',
    description: 'The files changed by the pull request or merge request, with their status and line counts.',
    parameters: noArguments,
    async run(_input, context) {
      const change = changeOf(context);
      if (change.host === 'github') {
        const files = JSON.parse(await get(change, `${change.path}/files?per_page=100`, 'application/vnd.github+json', context.signal)) as Array<Record<string, unknown>>;
        return files.map((f) => `${String(f.status)} ${String(f.filename)} (+${String(f.additions)} -${String(f.deletions)})`).join('\n');
      }
      const diffs = JSON.parse(await get(change, `${change.path}/diffs?per_page=100`, 'application/json', context.signal)) as Array<Record<string, unknown>>;
      return diffs.map((d) => `${d.new_file ? 'added' : d.deleted_file ? 'removed' : d.renamed_file ? 'renamed' : 'modified'} ${String(d.new_path)}`).join('\n');
    },
  },
};
