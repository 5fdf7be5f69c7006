/**
 * Where a finding goes on each host, a multi-line one (`start_line` … `line`) included:
 * - GitHub: a review comment with `start_line`/`start_side` before `line`/`side`; a
 *   ```suggestion in it replaces the whole range.
 * - GitLab: a text position on the last line with `line_range` (start and end, each with its
 *   line code `<sha1 of new path>_<old>_<new>`, `type` `new` for an added line and `old`
 *   otherwise, and the line's numbers); a plain ```suggestion replaces only the line it is
 *   on, so it becomes ```suggestion:-N+0 (the N lines above too).
 * A range must lie on one side within one hunk: GitHub refuses others, and a suggestion
 * across hunks would replace lines the diff does not show.
 */
import { createHash } from 'node:crypto';
import type { DiffLine, DiffLines } from './diff-lines';
import { findingLines, type Finding } from './findings';
import type { LiveChange } from './live-change';

type Obj = Record<string, unknown>;

/** Why a range cannot be placed on `lines` (its last line is on them), or nothing when it can. */
export function rangeProblem(lines: DiffLines, f: Finding): string | undefined {
  if (f.start_line === undefined) return undefined;
  const start = lines[f.side].get(f.start_line);
  if (!start) return `line ${f.start_line} is outside the diff`;
  return start.hunk === lines[f.side].get(f.line)?.hunk ? undefined : `${findingLines(f)} are not within one hunk of the diff`;
}

/** A GitHub review comment's place. */
export function githubPlace(f: Finding): Obj {
  return { path: f.path, ...(f.start_line === undefined ? {} : { start_line: f.start_line, start_side: f.side }), line: f.line, side: f.side };
}

/** A suggestion fence opened without a range: GitLab applies it to the commented line only. */
const PLAIN_SUGGESTION = /^( {0,3})(`{3,}|~{3,})suggestion[ \t]*$/;
/** Any fence opener (CommonMark: at most 3 spaces, 3 or more backticks or tildes). */
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * The finding as GitLab is sent it: a range's plain suggestions made to replace the whole
 * range. Only a block's own opening fence is rewritten, one outside any other fence: a line
 * of suggested text that looks like one (a Markdown file documenting suggestions) is text.
 * A LEFT range is left as it is: GitLab counts `-N` up from the position's new_line, in the
 * new file, while the range's lines are numbered in the old one.
 */
export function forGitlab(f: Finding): Finding {
  if (f.start_line === undefined || f.side === 'LEFT') return f;
  const above = f.line - f.start_line;
  let open: string | undefined;
  const lines = f.body.split('\n').map((line) => {
    if (open !== undefined) {
      // A closer: the same character, at least as many, nothing after it but spaces.
      const close = new RegExp(`^ {0,3}${open[0] === '`' ? '`' : '~'}{${open.length},}[ \\t]*$`);
      if (close.test(line)) open = undefined;
      return line;
    }
    const suggestion = PLAIN_SUGGESTION.exec(line);
    open = FENCE.exec(line)?.[1];
    return suggestion ? `${suggestion[1]}${suggestion[2]}suggestion:-${above}+0` : line;
  });
  return { ...f, body: lines.join('\n') };
}

/** A GitLab text position on the finding's (last) line; a context line carries both numbers, whichever side the finding names. */
export function gitlabPosition(refs: NonNullable<LiveChange['refs']>, oldPath: string, f: Finding, lines: DiffLines): Obj {
  const position: Obj = { position_type: 'text', base_sha: refs.base_sha, start_sha: refs.start_sha, head_sha: refs.head_sha, old_path: oldPath, new_path: f.path, ...numbers(lines[f.side].get(f.line), f) };
  if (f.start_line === undefined) return position;
  const fileHash = createHash('sha1').update(f.path).digest('hex');
  const end = (line: number): Obj => {
    const at = lines[f.side].get(line);
    return { line_code: `${fileHash}_${at?.old ?? line}_${at?.new ?? line}`, type: at?.kind === 'added' ? 'new' : 'old', ...numbers(at, { side: f.side, line }) };
  };
  return { ...position, line_range: { start: end(f.start_line), end: end(f.line) } };
}

/** A line's `old_line`/`new_line`: both on a context line (GitLab reads `old_line` alone as a removed line), else its side's. */
function numbers(at: DiffLine | undefined, f: Pick<Finding, 'side' | 'line'>): Obj {
  if (at?.kind === 'context') return f.side === 'LEFT' ? { old_line: f.line, new_line: at.new } : { new_line: f.line, old_line: at.old };
  return f.side === 'LEFT' ? { old_line: f.line } : { new_line: f.line };
}
