/**
 * Inline findings end to end: a model (OpenAI Chat Completions wire format) calls
 * `record_finding`; delivery posts one GitHub review (event COMMENT) with comments on diff
 * lines, folds out-of-diff findings into the sticky summary, never fails on a rejected
 * position, and does not repeat a finding on a re-review. GitLab gets positioned
 * discussions.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRequest } from '../../functions/core/agent/agent';
import { runToolLoop } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { BUILTIN_TOOLS } from '../../functions/core/agent/tools';
import type { Config } from '../../functions/core/config/types';
import { splitFindings, withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { QueueMessage, Source } from '../../functions/core/types';
import { FAKE_BOT, SAMPLE_PATCH as PATCH, botComment, codehostDelivery, startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const HEAD = 'cccccccccccccccccccccccccccccccccccccccc';
let host: FakeCodehost;
let llm: LocalServer;
let script: Array<() => unknown> = [];
const logs: string[] = [];

beforeAll(async () => {
  host = await startFakeCodehost();
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift()?.()));
});
afterAll(async () => {
  await host.close();
  await llm.close();
});
beforeEach(() => {
  host.reset();
  host.files = [{ filename: 'src/f.ts', status: 'modified', additions: 2, deletions: 1, patch: PATCH }];
  // The review is posted against the pull request's head as GitHub shows it now.
  host.pullHead = HEAD;
  logs.length = 0;
});

const settings = (): Config['delivery'] => codehostDelivery(host, 1000);
const payload = { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD } } };
const message = (eventId: string, source: Source = 'github', event = 'pull_request'): QueueMessage => ({ v: 1, event_id: eventId, subscription: 'review', source, event, delivery_id: 'd', received_at: '' });
const toolCall = (id: string, args: Record<string, unknown>) => ({ choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'record_finding', arguments: JSON.stringify(args) } }] } }] });
const text = (content: string) => ({ choices: [{ message: { role: 'assistant', content } }] });

async function review(eventId: string, findings: Array<Record<string, unknown>>): Promise<string> {
  script = [...findings.map((f, i) => () => toolCall(`c${i}`, f)), () => text('Verdict: needs work.')];
  const request: AgentRequest = {
    system: 'SYSTEM', prompt: 'Review', rendered: 'Review', allowedTools: ['record_finding'], timeoutMs: 5000, maxSteps: 10,
    message: message(eventId), payload,
  };
  const reply = await runToolLoop(request, { provider: openAiProvider({ baseUrl: `${llm.url}/v1`, apiKey: 'k', model: 'm' }), tools: BUILTIN_TOOLS, delivery: settings() });
  return reply.text;
}

function deliveryRequest(reply: string, eventId: string, source: Source = 'github', body: Record<string, unknown> = payload, event = 'pull_request'): DeliveryRequest {
  return {
    subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message: message(eventId, source, event), payload: body, reply, settings: settings(), logger: jsonLogger((l) => logs.push(l)),
  };
}
const targets = () => createDeliveryTargets(settings(), async () => {});

const FINDINGS = [
  { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero.' },
  { path: 'src/f.ts', line: 11, side: 'LEFT', severity: 'minor', body: 'Why was 2 wrong?' },
  { path: 'src/other.ts', line: 3, side: 'RIGHT', severity: 'major', body: 'Not in this diff.' },
];

describe('GitHub inline review', () => {
  test('one review (COMMENT) with inline comments on changed lines; the out-of-diff finding lands in the summary', async () => {
    const reply = await review('evt_1', FINDINGS);
    expect(splitFindings(reply).findings).toHaveLength(3);
    expect(await targets().codehost_comment.deliver(deliveryRequest(reply, 'evt_1'))).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(1);
    const posted = host.reviews[0]!;
    expect(posted).toMatchObject({ event: 'COMMENT', commit_id: HEAD });
    expect(posted.comments.map((c: { path: string; line: number; side: string }) => [c.path, c.line, c.side])).toEqual([['src/f.ts', 12, 'RIGHT'], ['src/f.ts', 11, 'LEFT']]);
    expect(posted.comments[0].body).toContain('**critical**: Division by zero.');
    const summary = host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
    expect(summary).toContain('Verdict: needs work.');
    expect(summary).toContain('2 finding(s) are posted as inline comments');
    expect(summary).toContain('**Findings not on changed lines**');
    expect(summary).toContain('`src/other.ts` line 3: Not in this diff. _(outside the diff)_');
    expect(summary).not.toContain('hookagent-findings:');
  });

  test('a re-review does not repeat a finding on the same line; only the new one is posted', async () => {
    await targets().codehost_comment.deliver(deliveryRequest(await review('evt_1', FINDINGS.slice(0, 1)), 'evt_1'));
    const second = await review('evt_2', [FINDINGS[0]!, { path: 'src/f.ts', line: 13, side: 'RIGHT', severity: 'nit', body: 'Context line.' }]);
    await targets().codehost_comment.deliver(deliveryRequest(second, 'evt_2'));
    expect(host.reviews).toHaveLength(2);
    expect(host.reviews[1]!.comments.map((c: { line: number }) => c.line)).toEqual([13]);
    expect(host.comments.get('/repos/octo/widgets/issues/7')).toHaveLength(1);
  });

  test('a rejected review (422) never fails the delivery: its findings are folded into the summary', async () => {
    const reply = withFindings('Verdict.', [FINDINGS[0] as Finding]);
    host.extra = (req, res) => {
      if (!(req.method === 'POST' && req.url.endsWith('/reviews'))) return false;
      sendJson(res, 422, { message: 'Unprocessable Entity', errors: ['Line could not be resolved'] });
      return true;
    };
    expect(await targets().codehost_comment.deliver(deliveryRequest(reply, 'evt_1'))).toMatchObject({ status: 'delivered' });
    delete host.extra;
    const summary = host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
    expect(summary).toContain('Division by zero. _(GitHub did not take the inline review (http_422))_');
  });

  test('a review GitHub created but answered 502 is found by its markers: neither posted again nor folded as refused', async () => {
    const reply = withFindings('Verdict.', [FINDINGS[0] as Finding]);
    let lost = true;
    host.extra = (req, res) => {
      if (!(lost && req.method === 'POST' && req.url.endsWith('/reviews'))) return false;
      lost = false;
      const created = JSON.parse(req.body) as { comments: Array<{ path: string; line: number; side: string; body: string }> };
      host.reviews.push(created);
      host.reviewComments.push(...created.comments.map((c) => ({ ...c, user: { ...FAKE_BOT, type: 'User' } })));
      sendJson(res, 502, { message: 'Bad Gateway' });
      return true;
    };
    expect(await targets().codehost_comment.deliver(deliveryRequest(reply, 'evt_1'))).toMatchObject({ status: 'delivered' });
    delete host.extra;
    expect(host.reviews).toHaveLength(1);
    const summary = host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
    expect(summary).toContain('1 finding(s) are posted as inline comments');
    expect(summary).not.toContain('did not take');
    // A 502 before anything was created is tried again: one review.
    host.reviews.length = 0;
    host.reviewComments.length = 0;
    let failed = false;
    host.extra = (req, res) => {
      if (failed || !(req.method === 'POST' && req.url.endsWith('/reviews'))) return false;
      failed = true;
      sendJson(res, 502, { message: 'Bad Gateway' });
      return true;
    };
    expect(await targets().codehost_comment.deliver(deliveryRequest(reply, 'evt_2'))).toMatchObject({ status: 'delivered' });
    delete host.extra;
    expect(host.reviews).toHaveLength(1);
  });

  test('record_finding refuses bad input and changes nothing by itself', async () => {
    const findings: Finding[] = [];
    const ctx = { message: message('e'), payload, delivery: settings(), signal: AbortSignal.timeout(1000), findings };
    const run = (input: unknown) => BUILTIN_TOOLS.record_finding!.run(input, ctx);
    host.server.requests.length = 0;
    await expect(run({ path: '../x', line: 1, severity: 'nit', body: 'b' })).rejects.toMatchObject({ code: 'tool_bad_input' });
    await expect(run({ path: 'a.ts', line: 0, severity: 'nit', body: 'b' })).rejects.toMatchObject({ code: 'tool_bad_input' });
    await expect(run({ path: 'a.ts', line: 1, severity: 'blocker', body: 'b' })).rejects.toMatchObject({ code: 'tool_bad_input' });
    await expect(run({ path: 'a.ts', line: 1, side: 'MIDDLE', severity: 'nit', body: 'b' })).rejects.toMatchObject({ code: 'tool_bad_input' });
    expect(await run({ path: 'a.ts', line: 1, severity: 'nit', body: 'b' })).toBe('Recorded finding 1 on a.ts:1 (RIGHT).');
    expect(findings).toHaveLength(1);
    expect(host.server.requests).toHaveLength(0);
  });

  test('other targets get the findings as a plain list, never the hidden block', async () => {
    const reply = withFindings('Verdict.', [FINDINGS[2] as Finding]);
    await targets().log.deliver(deliveryRequest(reply, 'evt_1'));
    expect(logs.join('\n')).toContain('**Findings**');
    expect(logs.join('\n')).not.toContain('hookagent-findings:');
  });
});

describe('GitLab inline discussions', () => {
  test('a discussion with a position per finding; context lines carry both lines; a rejected position is folded, not failed', async () => {
    const mr = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, unknown>;
    // GitLab's diff text ends with a newline: the empty piece after it is not a line of the hunk.
    host.mrDiffs = [{ old_path: 'src/f.ts', new_path: 'src/f.ts', diff: `${PATCH}\n`, new_file: false, renamed_file: false, deleted_file: false }];
    const findings: Finding[] = [
      { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero.' },
      { path: 'src/f.ts', line: 15, side: 'RIGHT', severity: 'minor', body: 'One past the hunk.' },
      { path: 'src/f.ts', line: 10, side: 'RIGHT', severity: 'nit', body: 'Context.' },
      { path: 'README.md', line: 1, side: 'RIGHT', severity: 'minor', body: 'Elsewhere.' },
    ];
    host.extra = (req, res) => {
      // The host rejects the context-line position once (as GitLab does for stale line codes).
      if (req.method === 'POST' && req.url.endsWith('/discussions') && req.body.includes('Context.')) {
        sendJson(res, 400, { message: '400 Bad request - Note {:line_code=>["must be a valid line code"]}' });
        return true;
      }
      return false;
    };
    const outcome = await targets().codehost_comment.deliver(deliveryRequest(withFindings('MR verdict.', findings), 'evt_9', 'gitlab', mr, 'merge_request'));
    delete host.extra;
    expect(outcome).toMatchObject({ status: 'delivered' });
    expect(host.discussions).toHaveLength(1);
    expect(host.discussions[0]!.notes[0]!.position).toEqual({
      position_type: 'text', base_sha: 'b'.repeat(40), start_sha: 's'.repeat(40), head_sha: 'h'.repeat(40), old_path: 'src/f.ts', new_path: 'src/f.ts', new_line: 12,
    });
    const context = host.server.requests.find((r) => r.method === 'POST' && r.body.includes('Context.'))!;
    expect(JSON.parse(context.body).position).toMatchObject({ new_line: 10, old_line: 10 });
    const note = [...host.comments.entries()].find(([k]) => k.startsWith('/api/v4/'))![1][0]!.body;
    expect(note).toContain('`README.md` line 1: Elsewhere. _(outside the diff)_');
    expect(note).toContain('`src/f.ts` line 15: One past the hunk. _(outside the diff)_');
    expect(note).toContain('Context. _(GitLab did not take the position (http_400))_');
  });
});
