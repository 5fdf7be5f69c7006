/** Read-only issue-triage tools: `get_issue`, `list_issue_comments`, `search_issues` (duplicates). */
import { HookError } from '../../errors';
import type { Tool } from '../tools';
import { answerJson, capText, getJson, inputOf, issuePath, listAll, obj, openSubject, s } from './codehost';

export const MAX_COMMENTS = 500;
const CAP = 20_000;

export const TRIAGE_TOOLS: Record<string, Tool> = {
  get_issue: {
    name: 'get_issue',
    description: 'The issue (or pull/merge request) this event is about: title, state, author, labels, assignees, body.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    async run(_input, context) {
      const opened = openSubject(context, 'any');
      const i = await getJson<Record<string, unknown>>(opened, issuePath(opened));
      const names = (v: unknown, key: string) => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : s(obj(x)?.[key]))).join(', ') : '');
      const github = opened.client.host === 'github';
      return [
        `#${opened.number}: ${s(i.title)}`, `state: ${s(i.state)}`, `author: ${s(obj(github ? i.user : i.author)?.[github ? 'login' : 'username'])}`,
        `labels: ${names(i.labels, 'name')}`, `assignees: ${names(i.assignees, github ? 'login' : 'username')}`, `comments: ${s(i.comments ?? i.user_notes_count)}`,
        '', capText(s(i.body ?? i.description), 10_000, 'the rest of the body is not shown'),
      ].join('\n');
    },
  },
  list_issue_comments: {
    name: 'list_issue_comments',
    description: `The comments on the issue (or pull/merge request), oldest first (up to ${MAX_COMMENTS}).`,
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    async run(_input, context) {
      const opened = openSubject(context, 'any');
      const path = opened.client.host === 'github' ? `/issues/${opened.number}/comments` : `${issuePath(opened)}/notes?sort=asc&order_by=created_at`;
      const { items, note } = await listAll<Record<string, unknown>>(opened, path, MAX_COMMENTS);
      const github = opened.client.host === 'github';
      const text = items.filter((c) => github || !c.system)
        .map((c) => `— ${s(obj(github ? c.user : c.author)?.[github ? 'login' : 'username'])} at ${s(c.created_at)}:\n${s(c.body)}`).join('\n\n');
      return capText(`${items.length} comment(s)\n${text}${note}`, CAP, 'older comments are shown first; later ones are not shown');
    },
  },
  search_issues: {
    name: 'search_issues',
    description: 'Search this repository\'s issues (open and closed) by words, to find duplicates. Input: {"query": "words"}.',
    parameters: { type: 'object', required: ['query'], properties: { query: { type: 'string', maxLength: 200 } }, additionalProperties: false },
    async run(input, context) {
      const raw = inputOf(input).query;
      if (typeof raw !== 'string' || raw.trim() === '') throw new HookError('tool_bad_input', 'query must be some words');
      // Qualifiers that widen the search beyond this repository are dropped, and so is what could
      // bind the appended `repo:` to the model's words instead: quotes (an unclosed `"` makes
      // it part of a phrase), parentheses and the boolean operators (`a OR b repo:x`).
      const words = raw.slice(0, 200).replace(/\b(?:repo|org|user|owner|is|in|type):\S*/gi, ' ').replace(/["()]|\b(?:OR|AND|NOT)\b/g, ' ').replace(/\s+/g, ' ').trim();
      if (!words) throw new HookError('tool_bad_input', 'query must contain words, not only qualifiers');
      const opened = openSubject(context, 'any');
      let lines: string[];
      if (opened.client.host === 'github') {
        const repo = opened.subject.repo!;
        const found = answerJson<{ total_count?: number; items?: Array<Record<string, unknown>> }>(
          await opened.client.requestFixed('/search/issues', { q: `${words} repo:${repo.owner}/${repo.name} is:issue`, per_page: '20' }),
        );
        // Whatever GitHub made of the query, only this repository's issues are shown (an installation's token may read others).
        const own = `/repos/${repo.owner}/${repo.name}`.toLowerCase();
        const items = (found.items ?? []).filter((i) => typeof i.repository_url !== 'string' || i.repository_url.toLowerCase().endsWith(own));
        lines = [`${found.total_count ?? 0} match(es)`, ...items.filter((i) => i.number !== opened.number).map((i) => `#${s(i.number)} [${s(i.state)}] ${s(i.title)}`)];
      } else {
        const found = await getJson<Array<Record<string, unknown>>>(opened, `/issues?search=${encodeURIComponent(words)}&per_page=20`);
        lines = [`${found.length} match(es)`, ...found.filter((i) => i.iid !== opened.number).map((i) => `#${s(i.iid)} [${s(i.state)}] ${s(i.title)}`)];
      }
      return capText(lines.join('\n'), CAP, 'more matches not shown');
    },
  },
};
