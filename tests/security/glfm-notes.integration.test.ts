/**
 * README Security table, "Ping hundreds of people in a GitHub/GitLab comment …": the text is
 * read as GitLab renders a note too (GitLab Flavored Markdown: comrak with GitLab's
 * extensions, after GitLab's own pre-processing). A merge request note goes to a local GitLab
 * API (fake-codehost) through the `codehost_comment` target, and the posted body is checked:
 * each mention and reference GitLab would read as text has its zero-width space, the footer
 * and its hidden markers come after what closes the reply (a fence only GitLab opens, a
 * `<plaintext>` no markup closes), and the reply reads the same otherwise.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { gitlabReading } from '../../functions/core/delivery/glfm-reading';
import { tokenize } from '../../functions/core/delivery/html-tokenizer';
import { jsonLogger } from '../../functions/core/log';
import { codehostDelivery, startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';

const Z = '\u200b';
const mr = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', 'merge_request.json'), 'utf8')) as Record<string, unknown>;
let host: FakeCodehost;
beforeAll(async () => {
  host = await startFakeCodehost();
});
afterAll(async () => host.close());
beforeEach(() => host.reset());

/** The note GitLab received for the merge request, replying `reply` (the agent's output). */
async function postedNote(reply: string): Promise<string> {
  const settings = codehostDelivery(host, 1000);
  const request: DeliveryRequest = {
    subscription: { name: 'mr', events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'x', comment_mode: 'new' },
    message: { v: 1, event_id: 'evt_glfm', subscription: 'mr', source: 'gitlab', event: 'merge_request', delivery_id: 'd', received_at: '' },
    payload: mr, reply, settings, logger: jsonLogger(() => {}),
  };
  expect(await createDeliveryTargets(settings, async () => {}).codehost_comment.deliver(request)).toMatchObject({ status: 'delivered' });
  const notes = [...host.comments.values()].flat();
  expect(notes).toHaveLength(1);
  return notes[0]!.body;
}

describe('a merge request note as GitLab reads it', () => {
  test('mentions and references GitLab reads as text get their space; code GitLab reads as code stays', async () => {
    const reply = [
      'Reviewed.',
      '',
      'Term `a',
      ': ping @team-leads about !4`',
      '',
      '$x `y$ and [see](%2312) cc @.ops `z`',
      '',
      'Keep `@Override` as is.',
    ].join('\n');
    const note = await postedNote(reply);
    expect(note).toContain(`: ping @${Z}team-leads about !${Z}4\``);
    expect(note).toContain(`$x \`y$ and [see](%23${Z}12) cc @${Z}.ops \`z\``);
    expect(note).toContain('Keep `@Override` as is.');
    expect(note.replaceAll(Z, '').startsWith(reply)).toBe(true);
  });

  test('a fence only GitLab opens (after a multi-line quote) is closed before the footer, which GitLab reads outside it', async () => {
    const reply = 'Quoting:\n\n>>>\n```\n>>>\n@all please look\n```';
    const note = await postedNote(reply);
    expect(note.startsWith(`Quoting:\n\n>>>\n\`\`\`\n>>>\n@${Z}all please look\n\`\`\`\n<!--\n\`\`\`\n<!-- -->`)).toBe(true);
    expect(note).toContain('<!-- hookagent:mr:evt_glfm -->');
    // The whole note as GitLab reads it leaves no fence open: the marker is no code text.
    expect(gitlabReading(note).fence).toBeUndefined();
    expect(gitlabReading(reply).fence).toBeDefined();
  });

  test('<plaintext> (GitLab does not filter it) is shown as text, and the marker after it stays a comment', async () => {
    const note = await postedNote('Done. <plaintext> tail');
    expect(note.startsWith('Done. &lt;plaintext> tail')).toBe(true);
    const page = tokenize({ state: 'data', details: 0 }, note, () => {});
    expect([page.state, page.raw]).toEqual(['data', undefined]);
  });
});
