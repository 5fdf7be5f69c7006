/**
 * A re-review's finding on a place that already carries an inline finding (hunt 8 D1; one
 * thread per place since fix 12, tests/review/findings-same-place):
 * - a different finding there after the author fixed the line (GitHub lists the old
 *   comment outdated) is posted, not dropped nor counted as "already posted";
 * - while the comment stands, no finding on its place is posted again, also when an
 *   earlier version posted it with the old marker (place only, no hash), so an upgrade
 *   posts nothing twice;
 * - a GitHub comment that went outdated (`line: null`) holds no place.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../functions/core/config/types';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import { inertText, replyClosers } from '../../functions/core/delivery/mentions';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { QueueMessage, Source } from '../../functions/core/types';
import { FAKE_BOT, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';

const HEAD_A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const HEAD_B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
}, { samplePatch: true });

const settings = (): Config['delivery'] => codehostDelivery(host, 1000);
const pr = (head: string) => ({ action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: head } } });
const mr = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, unknown>;
const message = (eventId: string, source: Source, event: string): QueueMessage => ({ v: 1, event_id: eventId, subscription: 'review', source, event, delivery_id: 'd', received_at: '' });
const request = (reply: string, eventId: string, source: Source, payload: Record<string, unknown>, event: string): DeliveryRequest => ({
  subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
  message: message(eventId, source, event), payload, reply, settings: settings(), logger: jsonLogger(() => {}),
});
const deliver = (r: DeliveryRequest) => createDeliveryTargets(settings(), async () => {}).codehost_comment.deliver(r);
const githubSummary = () => host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
const gitlabNote = () => [...host.comments.entries()].find(([k]) => k.startsWith('/api/v4/'))![1][0]!.body;
const gitlabInline = () => host.discussions.flatMap((d) => d.notes.map((n) => n.body));

const FIRST: Finding = { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero.' };
// After a push the author fixed the division; the re-review finds a different problem on the same line number.
const SECOND: Finding = { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'major', body: 'SQL built by string concatenation: injection.' };

/** An inline comment as versions before hunt 8 wrote it: the marker names the place only. */
const legacyBody = (f: Finding) => {
  const body = inertText(f.body);
  return `**${f.severity}**: ${body}${replyClosers(body)}\n\n<!-- hookagent-finding:review:${f.side}:${f.line}:${Buffer.from(f.path).toString('base64')} -->`;
};

describe('GitHub', () => {
  test('a different finding on a line the author changed since it was commented is posted inline, and not counted as already posted', async () => {
    expect(await deliver(request(withFindings('Review 1.', [FIRST]), 'evt_1', 'github', pr(HEAD_A), 'pull_request'))).toMatchObject({ status: 'delivered' });
    // The author fixed the division: GitHub lists the comment on the old code as outdated.
    Object.assign(host.reviewComments[0]!, { line: null, position: null, original_line: 12 });
    expect(await deliver(request(withFindings('Review 2.', [SECOND]), 'evt_2', 'github', pr(HEAD_B), 'pull_request'))).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(2);
    expect(host.reviews[1]!.comments.map((c: { body: string }) => c.body.split('\n')[0])).toEqual(['**major**: SQL built by string concatenation: injection.']);
    expect(githubSummary()).toContain('1 finding(s) are posted as inline comments');
    expect(githubSummary()).not.toContain('already posted');
  });

  test('a finding posted by an earlier version (marker without hash) holds its place: neither it nor a different one on its line is posted again', async () => {
    host.reviewComments.push({ ...FIRST, body: legacyBody(FIRST), user: { ...FAKE_BOT, type: 'User' } } as never);
    expect(await deliver(request(withFindings('Review 2.', [FIRST]), 'evt_up1', 'github', pr(HEAD_A), 'pull_request'))).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(0);
    expect(githubSummary()).toContain('1 finding(s) were already posted as inline comments on the same lines by an earlier review.');
    expect(await deliver(request(withFindings('Review 3.', [FIRST, SECOND]), 'evt_up2', 'github', pr(HEAD_B), 'pull_request'))).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(0);
    expect(githubSummary()).toContain('2 finding(s) were already posted as inline comments on the same lines by an earlier review.');
  });

  test('on a pull request with 3,100 older review comments, a finding the last review posted is still found (the list is read newest first)', async () => {
    const others = Array.from({ length: 3100 }, (_, i) => ({ path: 'src/old.ts', line: 1, side: 'RIGHT', body: `old comment ${i}`, user: { id: 7, login: 'dev', type: 'User' } }));
    host.reviewComments.push(...(others as never[]));
    expect(await deliver(request(withFindings('Review 1.', [FIRST]), 'evt_long1', 'github', pr(HEAD_A), 'pull_request'))).toMatchObject({ status: 'delivered' });
    expect(await deliver(request(withFindings('Review 2.', [FIRST]), 'evt_long2', 'github', pr(HEAD_B), 'pull_request'))).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(1);
    expect(githubSummary()).toContain('1 finding(s) were already posted as inline comments on the same lines by an earlier review.');
  });

  test('the same finding is matched whatever the whitespace the host gives back (CRLF)', async () => {
    await deliver(request(withFindings('Review 1.', [FIRST]), 'evt_ws1', 'github', pr(HEAD_A), 'pull_request'));
    const posted = host.reviewComments[0]!;
    posted.body = posted.body.replace(/\n/g, '\r\n');
    await deliver(request(withFindings('Review 2.', [FIRST]), 'evt_ws2', 'github', pr(HEAD_B), 'pull_request'));
    expect(host.reviews).toHaveLength(1);
  });

  test('an outdated review comment (line: null, its code changed since) does not keep the finding from being posted on the new code', async () => {
    await deliver(request(withFindings('Review 1.', [FIRST]), 'evt_od1', 'github', pr(HEAD_A), 'pull_request'));
    Object.assign(host.reviewComments[0]!, { line: null, position: null, original_line: 12 });
    expect(await deliver(request(withFindings('Review 2.', [FIRST]), 'evt_od2', 'github', pr(HEAD_B), 'pull_request'))).toMatchObject({ status: 'delivered' });
    expect(host.reviews).toHaveLength(2);
    expect(githubSummary()).not.toContain('already posted');
  });
});

describe('GitLab', () => {
  test('a different finding on a line whose discussion stands gets no second discussion, and is counted as already posted', async () => {
    expect(await deliver(request(withFindings('Review 1.', [FIRST]), 'evt_g1', 'gitlab', mr, 'merge_request'))).toMatchObject({ status: 'delivered' });
    expect(await deliver(request(withFindings('Review 2.', [FIRST, SECOND]), 'evt_g2', 'gitlab', mr, 'merge_request'))).toMatchObject({ status: 'delivered' });
    expect(gitlabInline().map((b) => b.split('\n')[0])).toEqual(['**critical**: Division by zero.']);
    expect(gitlabNote()).not.toContain('posted as inline comments on the diff');
    expect(gitlabNote()).toContain('2 finding(s) were already posted as inline comments on the same lines by an earlier review.');
  });

  test('a discussion posted by an earlier version (marker without hash) is recognised: it holds its place', async () => {
    host.discussions.push({ id: 'd0', notes: [{ body: legacyBody(FIRST), position: { new_line: 12 }, author: { id: FAKE_BOT.id, username: FAKE_BOT.login } } as never] });
    expect(await deliver(request(withFindings('Review 2.', [FIRST, SECOND]), 'evt_gu', 'gitlab', mr, 'merge_request'))).toMatchObject({ status: 'delivered' });
    expect(host.discussions).toHaveLength(1);
    expect(gitlabNote()).toContain('2 finding(s) were already posted as inline comments on the same lines by an earlier review.');
  });
});
