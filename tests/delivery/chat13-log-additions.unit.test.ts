/**
 * The `log` target logs hookagent's additions (the Findings list, the unread-diff note) after
 * the reply, also when the reply is truncated at the logged cap (before, the whole text was
 * cut at 4,000 characters, and the list and the note went with the tail).
 */
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';

const finding: Finding = { path: 'src/a.ts', line: 3, side: 'RIGHT', severity: 'major', body: 'Null dereference when the list is empty' };

async function logged(reply: string): Promise<string> {
  const lines: string[] = [];
  const targets = createDeliveryTargets({ timeout_ms: 1000, codehost: {} });
  const outcome = await targets.log.deliver({
    subscription: { name: 'review', events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x' },
    message: { v: 1, event_id: 'evt_log', subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '' },
    payload: {}, reply, settings: { timeout_ms: 1000, codehost: {} }, logger: jsonLogger((line) => lines.push(line)),
  });
  expect(outcome.status).toBe('delivered');
  return (JSON.parse(lines.find((l) => l.includes('agent reply'))!) as { reply: string }).reply;
}

test('a long reply is truncated before the Findings list and the unread-diff note, which stay', async () => {
  const reply = await logged(withFindings('x'.repeat(5_000), [finding], 'HTTP 404 from GitHub'));
  expect(reply.length).toBeLessThanOrEqual(4_000 + '…[truncated]'.length);
  expect(reply).toContain('…[truncated]');
  expect(reply.indexOf('…[truncated]')).toBeLessThan(reply.indexOf('**Findings**'));
  expect(reply).toContain('`src/a.ts` line 3');
  expect(reply).toContain("could not read this change's diff");
});

test('a short reply is logged whole, with its findings after it', async () => {
  const reply = await logged(withFindings('Looks fine.', [finding]));
  expect(reply.startsWith('Looks fine.\n\n**Findings**')).toBe(true);
  expect(reply).not.toContain('[truncated]');
});
