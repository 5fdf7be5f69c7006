/**
 * Inline findings on a renamed file (src/old.ts → src/new.ts). A finding on the old side
 * (a removed line) naturally names the old path; one on the new side the new path. Both
 * must land inline:
 * - GitLab: the position names the file by both paths (`old_path` the old name,
 *   `new_path` the new name), whichever side and whichever name the finding used.
 * - GitHub: a review comment names the file by its new `path`, with `side: LEFT` for the
 *   old side (GitHub lists a renamed file under its new `filename`, with `previous_filename`).
 * Bad input: a rename whose old path the host does not give.
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
import { SAMPLE_PATCH as PATCH, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';

const HEAD = 'cccccccccccccccccccccccccccccccccccccccc';
let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
});

const settings = (): Config['delivery'] => codehostDelivery(host, 1000);
const mr = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, unknown>;
const pr = { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD } } };
const message = (eventId: string, source: Source, event: string): QueueMessage => ({ v: 1, event_id: eventId, subscription: 'review', source, event, delivery_id: 'd', received_at: '' });
const deliver = (reply: string, eventId: string, source: Source) => {
  const request: DeliveryRequest = {
    subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message: message(eventId, source, source === 'github' ? 'pull_request' : 'merge_request'), payload: source === 'github' ? pr : mr, reply, settings: settings(), logger: jsonLogger(() => {}),
  };
  return createDeliveryTargets(settings(), async () => {}).codehost_comment.deliver(request);
};
const stickyBody = () => [...host.comments.values()][0]![0]!.body;
const finding = (path: string, line: number, side: 'LEFT' | 'RIGHT', body: string): Finding => ({ path, line, side, severity: 'minor', body });

describe('GitLab: a renamed file', () => {
  beforeEach(() => {
    host.mrDiffs = [{ old_path: 'src/old.ts', new_path: 'src/new.ts', diff: `${PATCH}\n`, new_file: false, renamed_file: true, deleted_file: false }];
  });

  test('findings on both sides, by either name, are posted inline with old_path and new_path', async () => {
    const findings = [
      finding('src/old.ts', 11, 'LEFT', 'Removed line, old name.'),
      finding('src/new.ts', 12, 'RIGHT', 'Added line.'),
      finding('src/new.ts', 12, 'LEFT', 'Context line, old side.'),
      finding('src/old.ts', 14, 'RIGHT', 'Context line, new side, old name.'),
    ];
    const outcome = await deliver(withFindings('Verdict.', findings), 'evt_gl_r1', 'gitlab');
    expect(outcome).toMatchObject({ status: 'delivered' });
    expect(stickyBody()).not.toContain('Findings not on changed lines');
    const positions = host.discussions.map((d) => d.notes[0]!.position);
    expect(positions).toHaveLength(4);
    expect(positions[0]).toMatchObject({ old_path: 'src/old.ts', new_path: 'src/new.ts', old_line: 11 });
    expect(positions[0]!.new_line).toBeUndefined();
    expect(positions[1]).toMatchObject({ old_path: 'src/old.ts', new_path: 'src/new.ts', new_line: 12 });
    expect(positions[1]!.old_line).toBeUndefined();
    expect(positions[2]).toMatchObject({ old_path: 'src/old.ts', new_path: 'src/new.ts', old_line: 12, new_line: 13 });
    expect(positions[3]).toMatchObject({ old_path: 'src/old.ts', new_path: 'src/new.ts', old_line: 13, new_line: 14 });
  });

  test('get_change_diff names the old path of a renamed file, which its removed lines belong to', async () => {
    const ctx = { message: message('evt_gl_r0', 'gitlab', 'merge_request'), payload: mr, delivery: settings(), signal: AbortSignal.timeout(5000) };
    expect(await BUILTIN_TOOLS.get_change_diff!.run({}, ctx)).toContain('--- src/new.ts (renamed from src/old.ts)\n@@ -10,4');
  });

  test('a re-review naming the same place by the other name does not post it again', async () => {
    await deliver(withFindings('Verdict.', [finding('src/old.ts', 11, 'LEFT', 'Removed line.')]), 'evt_gl_r2', 'gitlab');
    expect(host.discussions).toHaveLength(1);
    await deliver(withFindings('Verdict again.', [finding('src/new.ts', 11, 'LEFT', 'Removed line.')]), 'evt_gl_r3', 'gitlab');
    expect(host.discussions).toHaveLength(1);
  });

  test('bad input: a rename whose old_path is missing still posts new-side findings and folds what cannot be placed', async () => {
    host.mrDiffs = [{ new_path: 'src/new.ts', diff: `${PATCH}\n`, new_file: false, renamed_file: true, deleted_file: false }];
    const findings = [finding('src/new.ts', 12, 'RIGHT', 'Added line.'), finding('src/old.ts', 11, 'LEFT', 'Old name unknown to the host.')];
    const outcome = await deliver(withFindings('Verdict.', findings), 'evt_gl_r4', 'gitlab');
    expect(outcome).toMatchObject({ status: 'delivered' });
    expect(host.discussions).toHaveLength(1);
    expect(host.discussions[0]!.notes[0]!.position).toMatchObject({ new_path: 'src/new.ts', new_line: 12 });
    expect(stickyBody()).toContain('`src/old.ts` line 11 (removed): Old name unknown to the host. _(outside the diff)_');
  });
});

describe('GitHub: a renamed file', () => {
  beforeEach(() => {
    host.files = [{ filename: 'src/new.ts', previous_filename: 'src/old.ts', status: 'renamed', additions: 2, deletions: 1, patch: PATCH }];
  });

  test('a LEFT finding naming the old path is a review comment on the new path with side LEFT', async () => {
    const findings = [finding('src/old.ts', 11, 'LEFT', 'Removed line, old name.'), finding('src/new.ts', 12, 'RIGHT', 'Added line.')];
    const outcome = await deliver(withFindings('Verdict.', findings), 'evt_gh_r1', 'github');
    expect(outcome).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(1);
    expect(host.reviews[0]!.comments).toEqual([
      expect.objectContaining({ path: 'src/new.ts', line: 11, side: 'LEFT' }),
      expect.objectContaining({ path: 'src/new.ts', line: 12, side: 'RIGHT' }),
    ]);
    expect(stickyBody()).not.toContain('Findings not on changed lines');
  });

  test('bad input: a renamed file without previous_filename: the old name cannot be placed and is folded', async () => {
    host.files = [{ filename: 'src/new.ts', status: 'renamed', additions: 2, deletions: 1, patch: PATCH }];
    const outcome = await deliver(withFindings('Verdict.', [finding('src/old.ts', 11, 'LEFT', 'Old name.'), finding('src/new.ts', 11, 'LEFT', 'New name.')]), 'evt_gh_r2', 'github');
    expect(outcome).toMatchObject({ status: 'delivered' });
    expect(host.reviews[0]!.comments).toEqual([expect.objectContaining({ path: 'src/new.ts', line: 11, side: 'LEFT' })]);
    expect(stickyBody()).toContain('`src/old.ts` line 11 (removed): Old name. _(outside the diff)_');
  });
});
