/**
 * `record_finding`: the code-review skill notes a finding on a line. The tool only
 * collects (it changes nothing and calls nothing); delivery places the findings on the
 * diff after the run (`delivery/codehost-review.ts`).
 */
import { HookError } from '../../errors';
import { MAX_FINDING_BODY, MAX_FINDINGS, SEVERITIES, type Severity } from '../../delivery/findings';
import type { Tool } from '../tools';
import { inputOf, positiveLine, safeFilePath } from './codehost';
import { cutText } from '../../cut-text';

export const FINDING_TOOLS: Record<string, Tool> = {
  record_finding: {
    name: 'record_finding',
    description: 'Note one finding on a line of the change, numbered as get_change_diff shows it (it is posted as an inline comment after you answer; lines outside the diff go into the summary). side: RIGHT for a line of the new version, LEFT for a removed line (of a renamed file, either its old or new path). For a finding on several lines, start_line is its first line and line its last: same side, both in one hunk of get_change_diff (a range across hunks or off the diff goes into the summary). To propose a fix for RIGHT lines, the body may hold a ```suggestion block with their replacement: it replaces the one line, or the whole range from start_line to line. Changes nothing by itself.',
    parameters: {
      type: 'object', required: ['path', 'line', 'severity', 'body'], additionalProperties: false,
      properties: {
        path: { type: 'string' }, start_line: { type: 'integer', minimum: 1 }, line: { type: 'integer', minimum: 1 }, side: { type: 'string', enum: ['RIGHT', 'LEFT'] },
        severity: { type: 'string', enum: [...SEVERITIES] }, body: { type: 'string', maxLength: MAX_FINDING_BODY },
      },
    },
    async run(input, context) {
      const args = inputOf(input);
      const path = safeFilePath(args.path);
      const line = positiveLine(args.line, 'line');
      if (line === undefined) throw new HookError('tool_bad_input', 'line is required');
      const start = positiveLine(args.start_line, 'start_line');
      if (start !== undefined && start > line) throw new HookError('tool_bad_input', `start_line (${start}) must not be after line (${line}): line is the range's last line`);
      // A one-line range is a plain finding (GitHub refuses a start_line that does not precede line).
      const range = start !== undefined && start < line ? { start_line: start } : {};
      const side = args.side === undefined ? 'RIGHT' : args.side;
      if (side !== 'RIGHT' && side !== 'LEFT') throw new HookError('tool_bad_input', 'side must be RIGHT or LEFT');
      if (!SEVERITIES.includes(args.severity as Severity)) throw new HookError('tool_bad_input', `severity must be one of ${SEVERITIES.join(', ')}`);
      if (typeof args.body !== 'string' || args.body.trim() === '') throw new HookError('tool_bad_input', 'body must say what is wrong');
      const findings = context.findings;
      if (!findings) throw new HookError('tool_unavailable', 'Findings cannot be recorded in this run');
      if (findings.length >= MAX_FINDINGS) throw new HookError('tool_bad_input', `At most ${MAX_FINDINGS} findings per review; put the rest in your answer`);
      findings.push({ path, ...range, line, side, severity: args.severity as Severity, body: cutText(args.body.trim(), MAX_FINDING_BODY) });
      return `Recorded finding ${findings.length} on ${path}:${'start_line' in range ? `${range.start_line}-` : ''}${line} (${side}).`;
    },
  },
};
