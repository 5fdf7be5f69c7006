/**
 * GitLab quick actions in what hookagent posts, read the way GitLab reads a note: its
 * extractor (tests/support/gitlab-quick-actions.ts, a port of
 * lib/gitlab/quick_actions/extractor.rb) deletes every `\r` and shields only ``` blocks
 * closed by a line that is exactly ```, its "inline code", HTML and `>>>` blocks. A `~~~`
 * fence, an unclosed or indented fence, or a `\r` before the `/` shield nothing there: GitLab
 * would run `/approve` as the bot. Notes go to a local GitLab API (fake-codehost) and each
 * posted note is run through the extractor.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { commentText, inertText, neutraliseQuickActions } from '../../functions/core/delivery/mentions';
import { gitlabCommandStarts } from '../../functions/core/delivery/references';
import { jsonLogger } from '../../functions/core/log';
import { codehostDelivery, startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { gitlabQuickActions } from '../support/gitlab-quick-actions';

const Z = '\u200b';
const mr = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, unknown>;
let host: FakeCodehost;
beforeAll(async () => {
  host = await startFakeCodehost();
});
afterAll(async () => host.close());
beforeEach(() => host.reset());

function request(reply: string, agent?: 'none'): DeliveryRequest {
  return {
    subscription: { name: 'mr', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x', comment_mode: 'new', ...(agent ? { agent } : {}) },
    message: { v: 1, event_id: 'evt_q', subscription: 'mr', source: 'gitlab', event: 'merge_request', delivery_id: 'd', received_at: '' },
    payload: mr, reply, settings: codehostDelivery(host, 1000), logger: jsonLogger(() => {}),
  };
}

/** The note GitLab received for the merge request. */
async function postedNote(reply: string, agent?: 'none'): Promise<string> {
  const settings = codehostDelivery(host, 1000);
  expect(await createDeliveryTargets(settings, async () => {}).codehost_comment.deliver(request(reply, agent))).toMatchObject({ status: 'delivered' });
  const notes = [...host.comments.values()].flat();
  expect(notes).toHaveLength(1);
  return notes[0]!.body;
}

// Each would make GitLab run the command as the bot on today's CommonMark-only check.
const BYPASSES: Array<[string, string]> = [
  ['a ~~~ fence (GitLab shields only ```)', 'Quoted from the description:\n~~~\n/approve\n/merge\n~~~'],
  ['an unclosed ``` fence', 'Looks fine.\n```\n/approve\n/label ~security-reviewed'],
  ['an indented ~~~ fence', 'Steps:\n  ~~~\n/merge\n  ~~~'],
  ['a CR before the slash (GitLab deletes every \\r first)', 'Fixes a typo.\r\n\r/approve\r\n'],
  ['a ``` fence closed by ~~~ (CommonMark: code to the end; GitLab: no code block)', '```\n/approve\n~~~'],
];

describe('no posted note holds a quick action GitLab would run', () => {
  test.each(BYPASSES)('%s', async (_name, reply) => {
    expect(gitlabQuickActions(reply).length).toBeGreaterThan(0);
    const note = await postedNote(reply);
    expect(gitlabQuickActions(note)).toEqual([]);
    // It reads the same: only zero-width spaces were added.
    expect(note.replaceAll(Z, '').startsWith(reply)).toBe(true);
  });

  test('--agent none (the template quoting the description) is covered the same way', async () => {
    const note = await postedNote('New MR: Fix typo\n\n~~~\n/approve\n~~~', 'none');
    expect(gitlabQuickActions(note)).toEqual([]);
  });

  test('inline findings too', () => {
    for (const [, reply] of BYPASSES) expect(gitlabQuickActions(inertText(reply))).toEqual([]);
  });

  test('code that GitLab itself shields stays exactly as written (copyable)', async () => {
    for (const reply of ['```\n/usr/bin/env node\n```', '```sh\n/approve\n```\nafter', '>>>\n/close\n>>>']) {
      expect(commentText(reply, undefined).includes(`${Z}/`)).toBe(reply.startsWith('>>>'));
    }
    expect(await postedNote('```\n/in-code\n```')).toMatch(/^```\n\/in-code\n```\n/);
  });
});

describe('the scan finds exactly the lines GitLab runs', () => {
  // A fixed-seed generator over the pieces GitLab's extractor treats specially.
  const PIECES = ['/approve', '/merge now', '/label ~x', '```', '```js', '~~~', '````', '  ```', '`', 'a `b`', 'x`', '<div>', '</div>', '<b>',
    '>>>', '> q', '\r', '\r/close', 'text', '', ' /approve', '<', '>', '</x', 'y>', '<a\nb>', '>>> ', '/APPROVE'];
  let seed = 20261124;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const texts = Array.from({ length: 4000 }, () => Array.from({ length: 1 + next(9) }, () => PIECES[next(PIECES.length)]).join('\n'));

  test('as many command lines as the extractor finds, and none left after neutralising', () => {
    const wrong = texts.filter((t) => gitlabCommandStarts(t).length !== gitlabQuickActions(t).length);
    expect(wrong.slice(0, 3)).toEqual([]);
    const live = texts.filter((t) => gitlabQuickActions(neutraliseQuickActions(t)).length > 0);
    expect(live.slice(0, 3)).toEqual([]);
  });

  test('linear on a note where a backtracking port of the extractor takes seconds (1,000 lines of each: about 17 s)', () => {
    const note = `${'a`b\n'.repeat(20_000)}/approve\n${'`x\n'.repeat(20_000)}`;
    const started = Date.now();
    expect(neutraliseQuickActions(note)).toContain(`${Z}/approve`);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
