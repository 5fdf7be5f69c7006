/**
 * Code-review bot against the fake GitHub/GitLab (tests/support/fake-codehost.ts):
 * - GitLab: a LEFT finding on a context line is a position with both old_line and new_line
 *   (README: "context lines carry both"); with old_line alone GitLab reads it as a removed line.
 * - GitLab: a file whose diff GitLab left out (too_large / collapsed: `diff: ""`) is not
 *   shown to the model as an empty diff, but as a diff that is not available.
 * - A re-review whose findings were all posted inline before still says so in the sticky
 *   summary, instead of reading as if nothing had been found.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_TOOLS } from '../../functions/core/agent/tools';
import type { Config } from '../../functions/core/config/types';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { QueueMessage, Source } from '../../functions/core/types';
import { codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';

const HEAD = 'cccccccccccccccccccccccccccccccccccccccc';
let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
}, { samplePatch: true });

const settings = (): Config['delivery'] => codehostDelivery(host, 1000);
const mr = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, unknown>;
const pr = { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD } } };
const message = (eventId: string, source: Source, event: string): QueueMessage => ({ v: 1, event_id: eventId, subscription: 'review', source, event, delivery_id: 'd', received_at: '' });
const deliveryRequest = (reply: string, eventId: string, source: Source, payload: Record<string, unknown>, event: string): DeliveryRequest => ({
  subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
  message: message(eventId, source, event), payload, reply, settings: settings(), logger: jsonLogger(() => {}),
});
const deliver = (r: DeliveryRequest) => createDeliveryTargets(settings(), async () => {}).codehost_comment.deliver(r);
const postedPositions = () => host.server.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/discussions')).map((r) => (JSON.parse(r.body) as { position: Record<string, unknown> }).position);

describe('GitLab positions', () => {
  test('a LEFT finding on a context line carries both old_line and new_line', async () => {
    const findings: Finding[] = [
      { path: 'src/f.ts', line: 12, side: 'LEFT', severity: 'minor', body: 'Context line, old side.' },
      { path: 'src/f.ts', line: 11, side: 'LEFT', severity: 'minor', body: 'Removed line.' },
    ];
    const outcome = await deliver(deliveryRequest(withFindings('Verdict.', findings), 'evt_gl1', 'gitlab', mr, 'merge_request'));
    expect(outcome).toMatchObject({ status: 'delivered' });
    const [context, removed] = postedPositions();
    expect(context).toMatchObject({ old_path: 'src/f.ts', new_path: 'src/f.ts', old_line: 12, new_line: 13 });
    // A removed line has no new_line.
    expect(removed).toMatchObject({ old_line: 11 });
    expect(removed!.new_line).toBeUndefined();
  });
});

describe('GitLab diffs GitLab left out', () => {
  const context = () => ({ message: message('evt_gl2', 'gitlab', 'merge_request'), payload: mr, delivery: settings(), signal: AbortSignal.timeout(5000) });
  test('get_change_diff says a too_large/collapsed file has no diff available, instead of showing it empty', async () => {
    host.mrDiffs = [
      { old_path: 'big.json', new_path: 'big.json', diff: '', too_large: true, collapsed: false, new_file: false, renamed_file: false, deleted_file: false },
      { old_path: 'gen.ts', new_path: 'gen.ts', diff: '', too_large: false, collapsed: true, new_file: false, renamed_file: false, deleted_file: false },
      ...host.mrDiffs,
    ];
    const whole = await BUILTIN_TOOLS.get_change_diff!.run({}, context());
    expect(whole).toContain('--- src/f.ts\n@@ -10,4');
    expect(whole).toMatch(/--- big\.json\n\(no textual diff[^)]*\)/);
    expect(whole).toMatch(/--- gen\.ts\n\(no textual diff[^)]*\)/);
    const one = await BUILTIN_TOOLS.get_change_diff!.run({ path: 'big.json' }, context());
    expect(one).toMatch(/--- big\.json\n\(no textual diff[^)]*\)/);
  });
});

describe('re-review', () => {
  test('findings already posted inline are still mentioned in the sticky summary', async () => {
    const findings: Finding[] = [{ path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero.' }];
    const first = await deliver(deliveryRequest(withFindings('Verdict: needs work.', findings), 'evt_r1', 'github', pr, 'pull_request'));
    expect(first).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(1);
    const second = await deliver(deliveryRequest(withFindings('Verdict: still needs work.', findings), 'evt_r2', 'github', pr, 'pull_request'));
    expect(second).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(1);
    const sticky = host.comments.get('/repos/octo/widgets/issues/7')!;
    expect(sticky).toHaveLength(1);
    expect(sticky[0]!.body).toContain('Verdict: still needs work.');
    expect(sticky[0]!.body).toMatch(/1 finding\(s\) .*already posted as inline comments/);
  });
});

describe('a reply longer than GitHub takes', () => {
  test('the findings not on changed lines survive the cut of a long reply', async () => {
    const findings: Finding[] = [{ path: 'src/other.ts', line: 3, side: 'RIGHT', severity: 'critical', body: 'SQL injection in the query builder.' }];
    const long = `Verdict: needs work.\n\n${'Lots of words. '.repeat(5000)}`;
    const outcome = await deliver(deliveryRequest(withFindings(long, findings), 'evt_long', 'github', pr, 'pull_request'));
    expect(outcome).toMatchObject({ status: 'delivered' });
    const body = host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
    expect(body.length).toBeLessThanOrEqual(65_536);
    expect(body.startsWith('Verdict: needs work.')).toBe(true);
    expect(body).toContain('**Findings not on changed lines**');
    expect(body).toContain('SQL injection in the query builder. _(outside the diff)_');
    expect(body).toContain('<!-- hookagent:review:sticky -->');
  });
});

describe('a file the host shows no diff for', () => {
  test('a finding on it is folded with that reason, not "outside the diff"', async () => {
    host.files = [...host.files, { filename: 'big.min.js', status: 'modified', additions: 9000, deletions: 10 }];
    const findings: Finding[] = [{ path: 'big.min.js', line: 5, side: 'RIGHT', severity: 'major', body: 'Minified secret.' }];
    const outcome = await deliver(deliveryRequest(withFindings('Verdict.', findings), 'evt_big', 'github', pr, 'pull_request'));
    expect(outcome).toMatchObject({ status: 'delivered' });
    const body = host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
    expect(body).toContain('`big.min.js` line 5: Minified secret. _(the host shows no diff lines for this file: binary, too large, or only renamed)_');
  });
});
