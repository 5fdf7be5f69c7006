/**
 * Round 13 (chat): what hookagent writes after an agent's reply in a chat post (the
 * **Findings** list and the "could not read this change's diff" note) is appended to the
 * reply's text before the target formats and cuts it (targets.ts `listed` →
 * findings.ts flattenFindings). So
 * - a reply that leaves a code block open swallows them: Slack shows hookagent's own
 *   findings list and warning as raw Markdown inside the reply's code block;
 * - a reply long enough to be cut (Slack 40,000, Telegram 10 parts) loses them: the warning
 *   that the reply "is not a review of the change" is never posted.
 * Local servers speak Slack's incoming-webhook and Telegram's sendMessage wire formats.
 */
import type { Config } from '../../functions/core/config/types';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import type { Subscription } from '../../functions/core/types';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let hook: LocalServer;
let telegram: LocalServer;
let id = 0;
beforeAll(async () => {
  hook = await startLocalServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
  telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: ++id, chat: { id: -100123 }, date: 0, text: '' } }));
});
afterAll(async () => {
  await hook.close();
  await telegram.close();
});

const subscription: Subscription = { name: 'review', events: [], skills: [], deliver: ['teamchat', 'messenger'], state: 'active', created_at: '', updated_at: '', secret: 'x' };
const finding: Finding = { path: 'src/a.ts', line: 3, side: 'RIGHT', severity: 'major', body: 'Null dereference when the list is empty' };
const UNREAD = "hookagent could not read this change's diff";

async function deliver(target: 'teamchat' | 'messenger', reply: string): Promise<string[]> {
  const settings: Config['delivery'] = {
    timeout_ms: 2000, codehost: {},
    teamchat: { provider: 'slack', webhook_url: `${hook.url}/services/T/B/X`, api_url: 'unused' },
    messenger: { provider: 'telegram', bot_token: '42:T', chat_id: '-100123', api_url: telegram.url },
  };
  const server = target === 'teamchat' ? hook : telegram;
  const before = server.requests.length;
  const outcome = await createDeliveryTargets(settings, async () => {})[target].deliver({
    subscription, message: { v: 1, event_id: 'evt_n', subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' },
    payload: {}, reply, settings, logger: jsonLogger(() => {}),
  });
  expect(outcome).toMatchObject({ status: 'delivered' });
  return server.requests.slice(before).map((r) => (JSON.parse(r.body) as { text: string }).text);
}

/** The lines of mrkdwn outside ``` blocks (a line that is exactly ``` opens or closes one). */
function outsideCode(mrkdwn: string): string[] {
  let code = false;
  return mrkdwn.split('\n').filter((line) => {
    if (line === '```') {
      code = !code;
      return false;
    }
    return !code;
  });
}

test('Slack: a reply ending inside a code block does not swallow the Findings list and the unread-diff note', async () => {
  const reply = withFindings('The change renames the handler:\n\n```diff\n- handle(a)\n+ onEvent(a)', [finding], 'HTTP 404 from GET /repos/o/r/pulls/7/files');
  const [text] = await deliver('teamchat', reply);
  const shown = outsideCode(text as string).join('\n');
  // Converted, outside code: the heading bold, the finding a bullet, the note in italics.
  expect(shown).toContain('*Findings*');
  expect(shown).toContain('• *major* `src/a.ts` line 3');
  expect(shown).toContain(UNREAD);
});

test('Slack: a reply cut at 40,000 characters still carries the unread-diff note', async () => {
  const body = `Summary\n\n${'The handler changed. '.repeat(2_100)}`;
  const reply = withFindings(body, [], 'HTTP 404 from GET /repos/o/r/pulls/7/files');
  const [text] = await deliver('teamchat', reply);
  // The note counts the reply only, not what hookagent adds after it.
  expect(text).toContain(`…(cut: the reply was ${body.length} characters)`);
  expect((text as string).length).toBeLessThanOrEqual(40_000);
  // Its end, where the note belongs.
  expect((text as string).slice(-400)).toContain(UNREAD);
});

test('Slack: a cut reply that leaves a code block open keeps the Findings list outside it', async () => {
  const body = `Summary\n\n\`\`\`\n${'const handler = onEvent;\n'.repeat(2_000)}`;
  const [text] = await deliver('teamchat', withFindings(body, [finding], 'HTTP 404'));
  expect((text as string).length).toBeLessThanOrEqual(40_000);
  const shown = outsideCode(text as string).join('\n');
  expect(shown).toContain(`…(cut: the reply was ${body.length} characters)`);
  expect(shown).toContain('*Findings*\n• *major* `src/a.ts` line 3: Null dereference when the list is empty');
  expect(shown).toContain(UNREAD);
});

test('Slack: a short reply with findings is one post, as before', async () => {
  const [text] = await deliver('teamchat', withFindings('Looks **good**.', [finding]));
  expect(text).toBe('Looks *good*.\n\n*Findings*\n• *major* `src/a.ts` line 3: Null dereference when the list is empty');
});

test('Slack: thirty long findings take at most half the post; the rest is the reply, and the unread note stays', async () => {
  const many = Array.from({ length: 30 }, (_, i): Finding => ({ ...finding, line: i + 1, body: `finding ${i} ${'y'.repeat(1_990)}` }));
  const [text] = await deliver('teamchat', withFindings(`Summary\n\n${'The handler changed. '.repeat(2_100)}`, many, 'HTTP 404'));
  expect((text as string).length).toBeLessThanOrEqual(40_000);
  expect(text).toMatch(/…\(cut: the reply was \d+ characters\)/);
  expect(text).toContain('finding 0 ');
  expect(text).toMatch(/• _…and \d+ more findings_/);
  expect((text as string).slice(-400)).toContain(UNREAD);
});

test('Telegram: a reply cut after 10 parts still carries the unread-diff note', async () => {
  const reply = withFindings(`Summary\n\n${'The handler changed.\n'.repeat(2_200)}`, [], 'HTTP 404 from GET /repos/o/r/pulls/7/files');
  const parts = await deliver('messenger', reply);
  expect(parts).toHaveLength(10);
  expect(parts.some((part) => part.includes(UNREAD))).toBe(true);
});

test('Telegram: a cut reply keeps its Findings list and note in the last part, the cut note counting the reply only', async () => {
  const body = `Summary\n\n${'The handler changed.\n'.repeat(2_200)}`;
  const parts = await deliver('messenger', withFindings(body, [finding], 'HTTP 404'));
  expect(parts).toHaveLength(10);
  expect(parts.every((part) => part.length <= 4_096)).toBe(true);
  expect(parts[8]).toMatch(new RegExp(`…\\(cut: the reply was ${body.length} characters\\)$`));
  expect(parts[9]).toBe(`**Findings**\n- **major** \`src/a.ts\` line 3: Null dereference when the list is empty\n\n_${UNREAD} (HTTP 404): the reply above is not a review of the change._`);
});

test('Telegram: thirty long findings take at most half the parts; the reply the rest, the unread note last', async () => {
  const many = Array.from({ length: 30 }, (_, i): Finding => ({ ...finding, line: i + 1, body: `finding ${i} ${'y'.repeat(1_990)}` }));
  const parts = await deliver('messenger', withFindings(`Summary\n\n${'The handler changed.\n'.repeat(2_200)}`, many, 'HTTP 404'));
  expect(parts).toHaveLength(10);
  expect(parts.every((part) => part.length <= 4_096)).toBe(true);
  expect(parts[4]).toMatch(/…\(cut: the reply was \d+ characters\)$/);
  expect(parts[5]).toMatch(/^\*\*Findings\*\*\n- \*\*major\*\* `src\/a.ts` line 1: finding 0 /);
  expect(parts[9]).toMatch(new RegExp(`- _…and \\d+ more findings_\\n\\n_${UNREAD} \\(HTTP 404\\): the reply above is not a review of the change\\._$`));
});

test('a short reply leaves its room to a long Findings list (Slack and Telegram)', async () => {
  const many = Array.from({ length: 14 }, (_, i): Finding => ({ ...finding, line: i + 1, body: `finding ${i} ${'y'.repeat(1_990)}` }));
  const [text] = await deliver('teamchat', withFindings('Short.', many));
  expect(text).toContain('finding 13 ');
  expect(text).not.toContain('more findings');
  // Telegram: lines over 2,048 characters, one finding a part; the reply's 3 parts leave 7 (more than half of the 10).
  const long = many.slice(0, 8).map((f) => ({ ...f, body: `${f.body}${'y'.repeat(80)}` }));
  const parts = await deliver('messenger', withFindings(`Summary\n\n${'The handler changed.\n'.repeat(500)}`, long));
  expect(parts).toHaveLength(10);
  expect(parts.join('\n')).not.toContain('cut: the reply');
  expect(parts[9]).toMatch(/finding 6 y+\n- _…and 1 more finding_$/);
});

test('Telegram: a reply that fits in 10 parts is split as before, its findings after it', async () => {
  const parts = await deliver('messenger', withFindings('Looks good.', [finding]));
  expect(parts).toEqual(['Looks good.\n\n**Findings**\n- **major** `src/a.ts` line 3: Null dereference when the list is empty']);
});
