/**
 * A range finding's ```suggestion as GitLab gets it (hunt 13, review). GitLab applies a
 * suggestion to the NEW file's lines, from `position.new_line - N` to `position.new_line`
 * (Suggestible#from_line/to_line): a LEFT range's lines are counted on the old side, so its
 * suggestion is not rewritten (before, `-N` counted old lines and replaced an added line
 * outside the range). Only the block's own opening fence is rewritten, never a line of the
 * suggested text that looks like one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { QueueMessage } from '../../functions/core/types';
import { codehostDelivery, useFakeCodehost, type FakeCodehost } from '../support/fake-codehost';

let host: FakeCodehost;
useFakeCodehost((h) => (host = h), { samplePatch: true });

const settings = () => codehostDelivery(host, 1000);
const mr = () => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, unknown>;
const message = (eventId: string): QueueMessage => ({ v: 1, event_id: eventId, subscription: 'review', source: 'gitlab', event: 'merge_request', delivery_id: 'd', received_at: '' });
const deliver = (reply: string, eventId: string) => createDeliveryTargets(settings(), async () => {}).codehost_comment.deliver({
  subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
  message: message(eventId), payload: mr(), reply, settings: settings(), logger: jsonLogger(() => {}),
} satisfies DeliveryRequest);

// SAMPLE_PATCH: old 10/new 10 `const a` (context), old 11 `-const b = 2` (removed), new 11 `+const b = 3`,
// new 12 `+const c = b / 0` (added), old 12/new 13 `return a;` (context), old 13/new 14 `}`.
test('a LEFT range from a removed line to a context line: its GitLab suggestion replaces only lines of the range', async () => {
  const f: Finding = {
    path: 'src/f.ts', start_line: 11, line: 12, side: 'LEFT', severity: 'major',
    body: 'Keep the old value and the return together.\n\n```suggestion\n  return a;\n```',
  };
  expect(await deliver(withFindings('MR verdict.', [f]), 'evt_left')).toMatchObject({ status: 'delivered' });
  const posted = host.server.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/discussions')).map((r) => JSON.parse(r.body) as { body: string; position: { old_line?: number; new_line?: number } });
  expect(posted).toHaveLength(1);
  const { body, position } = posted[0]!;
  expect(position).toMatchObject({ old_line: 12, new_line: 13 });
  // What GitLab replaces when the suggestion is applied: new-file lines new_line - above … new_line.
  const above = Number(/```suggestion:-(\d+)\+0/.exec(body)?.[1] ?? 0);
  const replaced = Array.from({ length: above + 1 }, (_, i) => position.new_line! - above + i);
  // The range's lines in the new file: only `return a;` (new 13); new 12 is the added `const c = b / 0`, not in the finding.
  expect(replaced).toEqual([13]);
});

test('a range suggestion on a Markdown file whose new lines hold a ```suggestion line reaches GitLab as written', async () => {
  const lines = ['To propose a fix, write:', '', '```suggestion', 'new code', '```'];
  host.mrDiffs = [{ old_path: 'docs/review.md', new_path: 'docs/review.md', diff: `@@ -9,1 +9,6 @@\n # Review\n${lines.map((l) => `+${l}`).join('\n')}\n`, new_file: false, renamed_file: false, deleted_file: false }];
  const f: Finding = { path: 'docs/review.md', start_line: 10, line: 14, side: 'RIGHT', severity: 'minor', body: `Say it once more.\n\n~~~suggestion\n${lines.join('\n')}\n~~~` };
  expect(await deliver(withFindings('MR verdict.', [f]), 'evt_md')).toMatchObject({ status: 'delivered' });
  const posted = host.server.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/discussions')).map((r) => JSON.parse(r.body) as { body: string });
  expect(posted).toHaveLength(1);
  const body = posted[0]!.body;
  const open = '~~~suggestion:-4+0\n';
  expect(body).toContain(open);
  // What GitLab writes into the file when the suggestion is applied: the lines between the ~~~ fences.
  const inner = body.slice(body.indexOf(open) + open.length, body.indexOf('\n~~~', body.indexOf(open)));
  expect(inner.split('\n')).toEqual(lines);
});
