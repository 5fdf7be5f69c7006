/**
 * A re-review keeps one inline thread per place (path, side, line) of the current diff, as
 * review bots people already use do: while the subscription's own finding comment stands
 * there and is not outdated, a finding on that place is not posted again, whatever its
 * wording, whether the thread was resolved or not (the model words a finding differently
 * at each run; before, each push added a near-duplicate thread on an unchanged line). Such
 * findings are counted as already posted. A comment stands where the host shows it now: a
 * push that moves it keeps it on its code, and one that changes its line (GitHub: `line:
 * null`; GitLab: a position of an older diff version) frees the place.
 */
import { findingBody, withFindings, type Finding } from '../../functions/core/delivery/findings';
import { FAKE_BOT, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { deliverComment, reviewRequest } from '../support/review-request';

const HEAD_A = 'a'.repeat(40);
const HEAD_B = 'b'.repeat(40);
/** The fake GitLab merge request's diff_refs (GET …/merge_requests/1). */
const REFS = { base_sha: 'b'.repeat(40), start_sha: 's'.repeat(40), head_sha: 'h'.repeat(40) };
const PR = '/repos/octo/widgets/issues/7';
const MR = '/api/v4/projects/1/merge_requests/1';
let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
}, { samplePatch: true });

/** Line 12 of SAMPLE_PATCH (`const c = b / 0;`), as review 1 words it and as review 2 does. */
const FIRST: Finding = { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero.' };
const REWORDED: Finding = { ...FIRST, severity: 'major', body: '`b / 0` always divides by zero: this throws nothing and yields Infinity.' };
const ALREADY = '1 finding(s) were already posted as inline comments on the same lines by an earlier review.';
/** SAMPLE_PATCH after a push that added a line above the finding's: `const c = b / 0;` moved from new line 12 to 13. */
const SHIFTED_PATCH = '@@ -10,4 +10,6 @@ function f() {\n   const a = 1;\n-  const b = 2;\n+  const z = 0;\n+  const b = 3;\n+  const c = b / 0;\n   return a;\n }';

const review = async (findings: Finding[], eventId: string, sha: string, source: 'github' | 'gitlab') => {
  const settings = codehostDelivery(host, 1000);
  expect(await deliverComment(settings, reviewRequest(settings, withFindings(`Review ${eventId}.`, findings), eventId, sha, source))).toMatchObject({ status: 'delivered' });
  return host.comments.get(source === 'github' ? PR : MR)!.at(-1)!.body;
};
const firstLines = (bodies: string[]) => bodies.map((b) => b.split('\n')[0]);

describe('GitHub', () => {
  const inline = () => host.reviewComments.map((c) => c.body);
  /** Review 1's comment as GET …/pulls/7/comments lists it after a push (GitHub maps `line` and `position` onto the new diff). */
  const afterPush = (fields: { line: number | null; position: number | null }) => {
    Object.assign(host.reviewComments[0]!, { id: 501, original_line: 12, original_position: 3, commit_id: HEAD_B, original_commit_id: HEAD_A, ...fields });
  };

  test('a re-worded finding on a line that still carries the subscription\'s finding comment is not posted again, and is counted as already posted', async () => {
    await review([FIRST], 'evt_1', HEAD_A, 'github');
    afterPush({ line: 12, position: 3 });
    const summary = await review([REWORDED], 'evt_2', HEAD_B, 'github');
    expect(host.reviews).toHaveLength(1);
    expect(firstLines(inline())).toEqual(['**critical**: Division by zero.']);
    expect(summary).toContain(ALREADY);
    expect(summary).not.toContain('posted as inline comments on the diff');
  });

  test('once GitHub shows the comment outdated (line: null, its line changed), a finding on that line is posted', async () => {
    await review([FIRST], 'evt_o1', HEAD_A, 'github');
    afterPush({ line: null, position: null });
    const summary = await review([REWORDED], 'evt_o2', HEAD_B, 'github');
    expect(host.reviews).toHaveLength(2);
    expect(firstLines(inline())).toEqual(['**critical**: Division by zero.', `**major**: ${REWORDED.body}`]);
    expect(summary).toContain('1 finding(s) are posted as inline comments on the diff.');
    expect(summary).not.toContain('already posted');
  });

  test('a comment a push moved with its code holds the line GitHub shows it on now, not the one its marker names', async () => {
    await review([FIRST], 'evt_m1', HEAD_A, 'github');
    host.files = [{ filename: 'src/f.ts', status: 'modified', additions: 3, deletions: 1, patch: SHIFTED_PATCH }];
    afterPush({ line: 13, position: 4 });
    // Line 13 is the commented code; line 12 is now `const b = 3;`, which no comment is on.
    const other: Finding = { ...FIRST, severity: 'minor', body: 'Magic number.' };
    const summary = await review([{ ...REWORDED, line: 13 }, other], 'evt_m2', HEAD_B, 'github');
    expect(host.reviews).toHaveLength(2);
    expect(host.reviews[1]!.comments).toEqual([expect.objectContaining({ line: 12, body: expect.stringMatching(/^\*\*minor\*\*: Magic number\./) })]);
    expect(summary).toContain(ALREADY);
  });

  test('the place is found among many pages of review comments; another subscription\'s comment or a copied marker holds no place', async () => {
    const others = Array.from({ length: 250 }, (_, i) => ({ id: 10_000 + i, path: 'src/f.ts', line: 11, side: 'RIGHT', body: `discussion ${i}`, user: { id: 7, login: 'dev', type: 'User' } }));
    host.reviewComments.push(
      { id: 1, path: 'src/f.ts', line: 12, original_line: 12, side: 'RIGHT', body: findingBody('review', FIRST), user: { ...FAKE_BOT, type: 'User' } } as never,
      ...(others as never[]),
      // The same marker in a human's comment on line 13, and the bot's comment of another subscription on line 14.
      { id: 2, path: 'src/f.ts', line: 13, original_line: 13, side: 'RIGHT', body: findingBody('review', { ...FIRST, line: 13 }), user: { id: 7, login: 'dev', type: 'User' } } as never,
      { id: 3, path: 'src/f.ts', line: 14, original_line: 14, side: 'RIGHT', body: findingBody('security', { ...FIRST, line: 14 }), user: { ...FAKE_BOT, type: 'User' } } as never,
    );
    const summary = await review([REWORDED, { ...REWORDED, line: 13 }, { ...REWORDED, line: 14 }], 'evt_p', HEAD_B, 'github');
    expect(host.reviews).toHaveLength(1);
    expect(host.reviews[0]!.comments.map((c: { line: number }) => c.line)).toEqual([13, 14]);
    expect(summary).toContain(ALREADY);
  });
});

describe('GitLab', () => {
  const inline = () => host.discussions.flatMap((d) => d.notes.map((n) => n.body));
  /** Review 1's discussion as GET …/discussions lists it: a resolvable DiffNote, its position as GitLab keeps it after a push. */
  const listed = (position: Record<string, unknown>, resolved = false) => {
    const discussion = host.discussions[0]! as { id: string; individual_note?: boolean; resolved?: boolean; notes: Array<Record<string, unknown>> };
    discussion.individual_note = false;
    discussion.resolved = resolved;
    Object.assign(discussion.notes[0]!, { id: 601, type: 'DiffNote', resolvable: true, resolved, ...(resolved ? { resolved_by: { id: 7, username: 'dev' } } : {}) });
    Object.assign(discussion.notes[0]!.position as object, position);
  };

  test('a re-worded finding on a line whose discussion stands on the current diff is not posted again, and is counted as already posted', async () => {
    await review([FIRST], 'evt_g1', HEAD_A, 'gitlab');
    listed({});
    const summary = await review([REWORDED], 'evt_g2', HEAD_B, 'gitlab');
    expect(firstLines(inline())).toEqual(['**critical**: Division by zero.']);
    expect(summary).toContain(ALREADY);
  });

  test('a resolved discussion still holds its place: the person who resolved it dismissed the finding', async () => {
    await review([FIRST], 'evt_r1', HEAD_A, 'gitlab');
    listed({}, true);
    const summary = await review([REWORDED], 'evt_r2', HEAD_B, 'gitlab');
    expect(host.discussions).toHaveLength(1);
    expect(summary).toContain(ALREADY);
  });

  test('a discussion left at an older diff version (its line changed) frees the place: the finding is posted', async () => {
    await review([FIRST], 'evt_x1', HEAD_A, 'gitlab');
    listed({ head_sha: 'e'.repeat(40) });
    const summary = await review([REWORDED], 'evt_x2', HEAD_B, 'gitlab');
    expect(firstLines(inline())).toEqual(['**critical**: Division by zero.', `**major**: ${REWORDED.body}`]);
    expect(host.discussions[1]!.notes[0]!.position).toMatchObject(REFS);
    expect(summary).not.toContain('already posted');
  });

  test('a discussion GitLab moved forward with its code holds its new line, among many pages of discussions', async () => {
    await review([FIRST], 'evt_f1', HEAD_A, 'gitlab');
    host.mrDiffs = [{ old_path: 'src/f.ts', new_path: 'src/f.ts', diff: `${SHIFTED_PATCH}\n`, new_file: false, renamed_file: false, deleted_file: false }];
    // UpdateDiffPositionService: the line is unchanged, so the position moves to the new diff_refs and line.
    listed({ new_line: 13 });
    const mine = host.discussions.splice(0, 1);
    host.discussions.push(...Array.from({ length: 130 }, (_, i) => ({ id: `o${i}`, notes: [{ id: 9000 + i, body: `discussion ${i}`, author: { id: 7, username: 'dev' }, position: { ...REFS, new_path: 'src/f.ts', old_path: 'src/f.ts', new_line: 11 } }] })), ...mine);
    const other: Finding = { ...FIRST, severity: 'minor', body: 'Magic number.' };
    const summary = await review([{ ...REWORDED, line: 13 }, other], 'evt_f2', HEAD_B, 'gitlab');
    expect(host.discussions).toHaveLength(132);
    expect(host.discussions[131]!.notes[0]!).toMatchObject({ body: expect.stringMatching(/^\*\*minor\*\*: Magic number\./), position: { new_line: 12 } });
    expect(summary).toContain(ALREADY);
  });
});
