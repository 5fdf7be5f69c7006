/**
 * GitLab's quick-action extractor as GitLab runs it on a note (lib/gitlab/quick_actions/
 * extractor.rb, `perform_regex`): every `\r` deleted, then one regular expression, taken
 * left to right, whose alternatives shield code blocks, "inline code", HTML blocks and `>>>`
 * quotes, and otherwise match a command at a line start. Ruby's `mix` flags are JavaScript's
 * `ims` here (`.` matches a newline, `^`/`$` at lines, names in any case); Ruby's `\s` is
 * ASCII only. Fake GitLab servers use it to say which commands a posted note would run.
 * Backtracking regular expression: for test-sized texts only.
 */

/** A sample of GitLab's command names (merge requests and issues). */
export const GITLAB_COMMANDS = ['approve', 'unapprove', 'merge', 'close', 'reopen', 'label', 'unlabel', 'relabel', 'assign', 'unassign', 'unassign_reviewer',
  'assign_reviewer', 'milestone', 'lock', 'unlock', 'draft', 'ready', 'rebase', 'confidential', 'move', 'target_branch', 'title', 'due', 'estimate', 'spend'];

const EXTRACTOR = new RegExp([
  '(?<code>^```.+?\\n```$)',
  '(?<inline_code>^.*`\\n*.+?\\n*`$)',
  '(?<html>^<[^>]+?>\\n.+?\\n<\\/[^>]+?>$)',
  '(?<quote>^>>>\\n.+?\\n>>>$)',
  `(?:^\\/(?<cmd>${GITLAB_COMMANDS.join('|')})(?:[ ](?<arg>[^\\n]*))?(?:[ \\t\\n\\f\\v]*\\n|$))`,
].join('|'), 'gims');

/** The commands GitLab would run for `note`, as `[name, argument?]`, in order. */
export function gitlabQuickActions(note: string): string[][] {
  const commands: string[][] = [];
  for (const m of note.replace(/\r/g, '').matchAll(EXTRACTOR)) {
    const cmd = m.groups?.cmd;
    if (cmd) commands.push([cmd.toLowerCase(), ...(m.groups?.arg ? [m.groups.arg] : [])]);
  }
  return commands;
}
