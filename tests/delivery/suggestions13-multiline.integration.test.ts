/**
 * Multi-line findings: `record_finding` takes `start_line` (a range ending at `line`, one
 * side, one hunk). GitHub gets a review comment with `start_line`/`start_side`, whose
 * ```suggestion replaces the whole range; GitLab a discussion whose position carries
 * `line_range` (line codes as GitLab's diff parser numbers lines), its suggestion rewritten
 * to ```suggestion:-N+0. A range off the diff or across hunks is folded into the summary; a
 * range is one thread per place by its last line.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRequest } from '../../functions/core/agent/agent';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { BUILTIN_TOOLS } from '../../functions/core/agent/tools';
import { splitFindings, withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { QueueMessage, Source } from '../../functions/core/types';
import { FAKE_BASE_SHA, SAMPLE_PATCH, SAMPLE_PATCH_PUSHED, codehostDelivery, useFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const HEAD = 'c'.repeat(40);
const READ = 'a'.repeat(40);
let host: FakeCodehost;
let llm: LocalServer;
let script: Array<() => unknown> = [];
useFakeCodehost((h) => (host = h), { samplePatch: true });
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift()?.()));
});
afterAll(async () => llm.close());
beforeEach(() => {
  host.pullHead = HEAD;
});

const settings = () => codehostDelivery(host, 1000);
const payload = { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD } } };
const mr = () => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, unknown>;
const message = (eventId: string, source: Source = 'github', event = 'pull_request'): QueueMessage => ({ v: 1, event_id: eventId, subscription: 'review', source, event, delivery_id: 'd', received_at: '' });
const deliver = (reply: string, eventId: string, source: Source = 'github') => createDeliveryTargets(settings(), async () => {}).codehost_comment.deliver({
  subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
  message: message(eventId, source, source === 'github' ? 'pull_request' : 'merge_request'), payload: source === 'github' ? payload : mr(), reply, settings: settings(), logger: jsonLogger(() => {}),
} satisfies DeliveryRequest);
const githubSummary = () => host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
const gitlabSummary = () => [...host.comments.entries()].find(([k]) => k.startsWith('/api/v4/'))![1][0]!.body;

const SUGGESTION = 'Name them once.\n\n```suggestion\n  const b = 3, c = b / 1;\n```';
/** SAMPLE_PATCH: new 11 and 12 are added lines of its one hunk; 10 is a context line. */
const RANGE: Finding = { path: 'src/f.ts', start_line: 11, line: 12, side: 'RIGHT', severity: 'major', body: SUGGESTION };

describe('record_finding with start_line', () => {
  const run = (findings: Finding[]) => (input: unknown) => BUILTIN_TOOLS.record_finding!.run(input, { message: message('e'), payload, delivery: settings(), signal: AbortSignal.timeout(1000), findings });

  test('a range is recorded; a bad range is refused with tool_bad_input; a one-line range is a plain finding', async () => {
    const findings: Finding[] = [];
    const record = run(findings);
    expect(await record({ path: 'src/f.ts', start_line: 11, line: 12, severity: 'major', body: 'b' })).toBe('Recorded finding 1 on src/f.ts:11-12 (RIGHT).');
    await expect(record({ path: 'src/f.ts', start_line: 13, line: 12, severity: 'major', body: 'b' })).rejects.toMatchObject({ code: 'tool_bad_input', message: expect.stringContaining('start_line (13) must not be after line (12)') });
    await expect(record({ path: 'src/f.ts', start_line: 0, line: 12, severity: 'major', body: 'b' })).rejects.toMatchObject({ code: 'tool_bad_input' });
    await expect(record({ path: 'src/f.ts', start_line: 1.5, line: 12, severity: 'major', body: 'b' })).rejects.toMatchObject({ code: 'tool_bad_input' });
    expect(await record({ path: 'src/f.ts', start_line: 12, line: 12, severity: 'nit', body: 'b' })).toBe('Recorded finding 2 on src/f.ts:12 (RIGHT).');
    expect(findings).toEqual([
      { path: 'src/f.ts', start_line: 11, line: 12, side: 'RIGHT', severity: 'major', body: 'b' },
      { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'nit', body: 'b' },
    ]);
    expect(BUILTIN_TOOLS.record_finding!.parameters).toMatchObject({ properties: { start_line: { type: 'integer', minimum: 1 } } });
  });

  test('a range travels in the reply block; a block whose range starts after its line carries no finding', () => {
    const reply = withFindings('v', [RANGE]);
    expect(splitFindings(reply).findings).toEqual([RANGE]);
    const forged = `<!-- hookagent-findings:${Buffer.from(JSON.stringify([{ ...RANGE, start_line: 40 }])).toString('base64')} -->\nv`;
    expect(splitFindings(forged).findings).toEqual([]);
  });
});

describe('GitHub multi-line review comments', () => {
  test('a model-recorded range is one comment with start_line/start_side; its ```suggestion stays plain (GitHub replaces the range)', async () => {
    script = [
      () => ({ choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'record_finding', arguments: JSON.stringify({ path: 'src/f.ts', start_line: 11, line: 12, side: 'RIGHT', severity: 'major', body: SUGGESTION }) } }] } }] }),
      () => ({ choices: [{ message: { role: 'assistant', content: 'Verdict: fix the range.' } }] }),
    ];
    const request: AgentRequest = { system: 'S', prompt: 'Review', rendered: 'Review', allowedTools: ['record_finding'], timeoutMs: 5000, maxSteps: 5, message: message('evt_1'), payload };
    const reply = (await runToolLoop(request, { provider: openAiProvider({ baseUrl: `${llm.url}/v1`, apiKey: 'k', model: 'm' }), tools: BUILTIN_TOOLS, delivery: settings() })).text;
    expect(await deliver(reply, 'evt_1')).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(1);
    const [comment] = host.reviews[0]!.comments as Array<Record<string, unknown>>;
    expect(comment).toMatchObject({ path: 'src/f.ts', start_line: 11, start_side: 'RIGHT', line: 12, side: 'RIGHT' });
    expect(comment!.body).toContain('```suggestion\n  const b = 3, c = b / 1;\n```');
    expect(githubSummary()).toContain('1 finding(s) are posted as inline comments');
  });

  test('a range across hunks, or starting outside the diff, is folded into the summary with why; a one-hunk range beside it is posted', async () => {
    host.files = [{ filename: 'src/f.ts', status: 'modified', additions: 4, deletions: 1, patch: SAMPLE_PATCH_PUSHED }];
    const findings: Finding[] = [
      { path: 'src/f.ts', start_line: 12, line: 40, side: 'RIGHT', severity: 'major', body: 'Across hunks.' },
      { path: 'src/f.ts', start_line: 5, line: 11, side: 'RIGHT', severity: 'minor', body: 'Starts before the hunk.' },
      { path: 'src/f.ts', start_line: 39, line: 41, side: 'RIGHT', severity: 'critical', body: 'No eval.' },
    ];
    expect(await deliver(withFindings('Verdict.', findings), 'evt_2')).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(1);
    expect((host.reviews[0]!.comments as Array<Record<string, unknown>>).map((c) => [c.start_line, c.line])).toEqual([[39, 41]]);
    const summary = githubSummary();
    expect(summary).toContain('`src/f.ts` lines 12–40: Across hunks. _(lines 12–40 are not within one hunk of the diff)_');
    expect(summary).toContain('`src/f.ts` lines 5–11: Starts before the hunk. _(line 5 is outside the diff)_');
  });

  test('one thread per place, by the last line: a re-review skips a range or a line ending where a range comment stands', async () => {
    await deliver(withFindings('First.', [RANGE]), 'evt_1');
    expect(host.reviews).toHaveLength(1);
    const second: Finding[] = [
      { ...RANGE, start_line: 10, body: 'Worded again, wider.' },
      { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'nit', body: 'Same last line.' },
      { path: 'src/f.ts', start_line: 10, line: 11, side: 'RIGHT', severity: 'nit', body: 'Ends elsewhere.' },
    ];
    expect(await deliver(withFindings('Second.', second), 'evt_2')).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(2);
    expect((host.reviews[1]!.comments as Array<Record<string, unknown>>).map((c) => [c.start_line, c.line])).toEqual([[10, 11]]);
    expect(githubSummary()).toContain('2 finding(s) were already posted');
  });

  test('after a push during the run the range is placed on the diff the run read (commit_id), start_line kept', async () => {
    host.diffsAt.set(READ, { files: [{ filename: 'src/f.ts', status: 'modified', additions: 2, deletions: 1, patch: SAMPLE_PATCH }], mrDiffs: [] });
    // The head now has a second hunk before the first, so the range's lines moved: it is not placed on them.
    host.files = [{ filename: 'src/f.ts', status: 'modified', additions: 3, deletions: 1, patch: `@@ -1,1 +1,2 @@\n a\n+b\n${SAMPLE_PATCH.replace('@@ -10,4 +10,5 @@', '@@ -10,4 +11,5 @@')}` }];
    expect(await deliver(withFindings('Verdict.', [RANGE], undefined, READ), 'evt_3')).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(1);
    expect(host.reviews[0]).toMatchObject({ commit_id: READ, comments: [{ start_line: 11, start_side: 'RIGHT', line: 12, side: 'RIGHT' }] });
    expect(host.server.requests.some((r) => r.url.includes(`/compare/${FAKE_BASE_SHA}...${READ}`))).toBe(true);
  });
});

describe('GitLab multi-line discussions', () => {
  const code = (oldLine: number, newLine: number) => `${createHash('sha1').update('src/f.ts').digest('hex')}_${oldLine}_${newLine}`;

  test('the position carries line_range with GitLab line codes; a plain ```suggestion becomes ```suggestion:-N+0', async () => {
    const left: Finding = { path: 'src/f.ts', start_line: 10, line: 11, side: 'LEFT', severity: 'minor', body: 'Old pair.' };
    expect(await deliver(withFindings('MR verdict.', [RANGE, left]), 'evt_1', 'gitlab')).toMatchObject({ status: 'delivered' });
    const posted = host.server.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/discussions')).map((r) => JSON.parse(r.body) as { body: string; position: Record<string, unknown> });
    expect(posted).toHaveLength(2);
    expect(posted[0]!.position).toEqual({
      position_type: 'text', base_sha: FAKE_BASE_SHA, start_sha: 's'.repeat(40), head_sha: 'h'.repeat(40), old_path: 'src/f.ts', new_path: 'src/f.ts', new_line: 12,
      // Added lines: GitLab's parser gives them the old side's next number (12, after removed old 11).
      line_range: { start: { line_code: code(12, 11), type: 'new', new_line: 11 }, end: { line_code: code(12, 12), type: 'new', new_line: 12 } },
    });
    expect(posted[0]!.body).toContain('```suggestion:-1+0\n  const b = 3, c = b / 1;\n```');
    expect(posted[0]!.body).not.toMatch(/```suggestion\n/);
    // A context line carries both numbers; a removed line the new side's next one.
    expect(posted[1]!.position).toMatchObject({
      old_line: 11, line_range: { start: { line_code: code(10, 10), type: 'old', old_line: 10, new_line: 10 }, end: { line_code: code(11, 11), type: 'old', old_line: 11 } },
    });
    expect(posted[1]!.position).not.toHaveProperty('new_line');
    expect((posted[1]!.position.line_range as { end: object }).end).not.toHaveProperty('new_line');
    expect(gitlabSummary()).toContain('2 finding(s) are posted as inline comments');
  });

  test('a range from a context line: both numbers at its start, ```suggestion:-2+0; a re-review skips a range ending on its last line', async () => {
    const wide: Finding = { ...RANGE, start_line: 10, body: SUGGESTION };
    await deliver(withFindings('First.', [wide]), 'evt_1', 'gitlab');
    expect(host.discussions).toHaveLength(1);
    const note = host.discussions[0]!.notes[0]!;
    expect(note.position).toMatchObject({ new_line: 12, line_range: { start: { line_code: code(10, 10), type: 'old', old_line: 10, new_line: 10 }, end: { line_code: code(12, 12), type: 'new', new_line: 12 } } });
    expect(note.body).toContain('```suggestion:-2+0\n');
    await deliver(withFindings('Second.', [{ ...RANGE, body: 'Again, other words.' }]), 'evt_2', 'gitlab');
    expect(host.discussions).toHaveLength(1);
    expect(gitlabSummary()).toContain('1 finding(s) were already posted');
  });

  test('a GitLab range across hunks is folded, not posted', async () => {
    host.mrDiffs = [{ old_path: 'src/f.ts', new_path: 'src/f.ts', diff: `${SAMPLE_PATCH_PUSHED}\n`, new_file: false, renamed_file: false, deleted_file: false }];
    expect(await deliver(withFindings('V.', [{ ...RANGE, line: 40 }]), 'evt_3', 'gitlab')).toMatchObject({ status: 'delivered' });
    expect(host.discussions).toHaveLength(0);
    expect(gitlabSummary()).toContain('_(lines 11–40 are not within one hunk of the diff)_');
  });
});
