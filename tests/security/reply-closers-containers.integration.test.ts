/**
 * README Security table, "Hide or fold what hookagent writes after the reply in its comment
 * (the 'could not read the diff' warning, the findings that could not go inline, the footer
 * naming the reviewed commit) with an unclosed `<!--`, `<details>` … | Whatever the reply
 * leaves open is closed right after it". Forms that Markdown and the HTML parser read as
 * open although no line of the reply starts with them:
 * - an HTML comment opened in an HTML block inside a block quote or list item (`> <!--`,
 *   `- <!--`): the container ends, the raw `<!-- …` reaches the page and the HTML tokenizer
 *   runs the comment to the first `-->`, the footer's marker;
 * - `<details` with its `>` on the next line (an HTML block start; the same start tag to the
 *   HTML parser), and `<details/>` (not a void element: it opens one), which fold everything
 *   after them;
 * - a tag left open inside a quoted attribute value (`<div title="`), and `<?`, `<!X` (bogus
 *   comments to the HTML parser, up to the next `>`).
 * Against a local server speaking GitHub's wire format, with the reader model of
 * untrusted-layout.integration.test.ts.
 */
import { withFindings } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import { codehostDelivery, startFakeCodehost, SAMPLE_PATCH, type FakeCodehost } from '../support/fake-codehost';

const HEAD = 'cccccccccccccccccccccccccccccccccccccccc';
const payload = { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD } } };
let host: FakeCodehost;
beforeAll(async () => {
  host = await startFakeCodehost();
});
afterAll(async () => host.close());
beforeEach(() => {
  host.reset();
  host.files = [{ filename: 'src/f.ts', status: 'modified', additions: 2, deletions: 1, patch: SAMPLE_PATCH }];
});

function request(reply: string): DeliveryRequest {
  return {
    subscription: { name: 'review', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message: { v: 1, event_id: 'evt_l', subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' },
    payload, reply, settings: codehostDelivery(host, 1000), logger: jsonLogger(() => {}),
  };
}

async function comment(reply: string): Promise<string> {
  const outcome = await createDeliveryTargets(codehostDelivery(host, 1000), async () => {}).codehost_comment.deliver(request(reply));
  expect(outcome).toMatchObject({ status: 'delivered' });
  return host.comments.get('/repos/octo/widgets/issues/7')![0]!.body;
}

/**
 * The text a reader sees of an HTML stream, read left to right as the HTML tokenizer does:
 * a comment ends at the first `-->` (`<!-->` and `<!--->` at once), `<?` and `<!X` at the
 * next `>`, a tag at its `>` outside an attribute's quoted value; whatever is unclosed runs
 * to the end. Tags are markup, not text, and the content of a `<details>` that is never
 * closed is folded away.
 */
function shown(body: string): string {
  const OPEN = '\u0001';
  const CLOSE = '\u0002';
  const markup = /<!--(?:>|->|[^]*?--!?>|[^]*$)|<[?!][^>]*(?:>|$)|<(\/?)([A-Za-z][^\s/>]*)(?:[^>=]|=\s*(?:"[^"]*(?:"|$)|'[^']*(?:'|$)|[^\s>]*))*(?:>|$)/g;
  let out = body.replace(markup, (_m, slash?: string, name?: string) => (name?.toLowerCase() === 'details' ? (slash ? CLOSE : OPEN) : ''));
  if (out.split(OPEN).length > out.split(CLOSE).length) out = out.slice(0, out.indexOf(OPEN));
  return out.replaceAll(OPEN, '').replaceAll(CLOSE, '');
}

describe('a reply cannot hide what hookagent writes after it, from inside a container or a split tag', () => {
  const UNREAD = 'get_change_diff failed: http_404';
  test.each([
    ['an HTML comment opened in a block quote', 'LGTM, ship it.\n\n> <!-- reviewer notes'],
    ['an HTML comment opened in a list item', 'LGTM, ship it.\n\n- <!-- reviewer notes'],
    ['an HTML comment opened in a nested container', 'LGTM.\n\n1. step\n   > - <!-- reviewer notes\n   >   more'],
    ['a <details> tag whose > is on the next line', 'LGTM, ship it.\n\n<details\n>\n\nnothing here'],
    ['a self-closing <details/>', 'LGTM, ship it.\n\n<details/>\n\nnothing here'],
    ['a <details> in a list item', 'LGTM.\n\n- <details><summary>More</summary>\n\n  nothing here'],
    ['a tag left open in a quoted attribute value', 'LGTM.\n\n<div title="notes'],
    ['a processing instruction', 'LGTM.\n\n<?xml notes'],
    ['a declaration', 'LGTM.\n\n<!DOCTYPE notes'],
  ])('%s: the unread-diff warning and the footer stay visible', async (_name, reply) => {
    const body = await comment(withFindings(reply, [], UNREAD));
    const visible = shown(body);
    expect(visible).toContain("hookagent could not read this change's diff");
    expect(visible).toContain('hookagent · review ·');
    expect(body).toContain('<!-- hookagent:review:sticky -->');
  });

  test('a closed comment or <details> inside a container leaves the reply exactly as written', async () => {
    const reply = 'Fine.\n\n> <!-- a closed comment -->\n\n- <details><summary>s</summary>\n\n  x\n  </details>\n- `<!--` in a code span';
    const body = await comment(reply);
    expect(body.startsWith(`${reply}\n\n---\n<sub>`)).toBe(true);
  });
});
