/**
 * Every event the README's delivery table gives a comment place is one `subscribe` takes with
 * `codehost_comment` (hunt 13, gitlab D2): GitLab's Job Hook (`gitlab:build`, a commit
 * comment), GitHub's `workflow_job`, `deployment` and `deployment_status` (commit comments).
 * Before, each was refused with "those events name no pull/merge request, issue or commit".
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, hkIn, tempConfigDir } from '../support/cli';

let dir: string;
beforeAll(() => {
  buildCli();
  dir = tempConfigDir('webhooks: { gitlab: { secret: ${GL} }, github: { secret: ${GH} } }\ndelivery:\n  codehost: { gitlab: { token: ${GT} }, github: { token: ${HT} } }\n', 'hookagent-h13-commentable-');
  writeFileSync(join(dir, '.env'), 'GL=s\nGH=s\nGT=t\nHT=t\n');
});

test.each(['gitlab:build', 'github:workflow_job', 'github:deployment', 'github:deployment_status'])('subscribe takes codehost_comment for %s', async (event) => {
  const name = event.replace(/[^a-z]/g, '-');
  const created = await hkIn(dir, 'webhook', 'subscribe', name, '--events', event, '--agent', 'none', '--prompt', 'x', '--deliver', 'codehost_comment');
  expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
}, 60_000);

test('an event with no comment place is still refused', async () => {
  const refused = await hkIn(dir, 'webhook', 'subscribe', 'stars', '--events', 'github:star', '--agent', 'none', '--prompt', 'x', '--deliver', 'codehost_comment');
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('codehost_comment cannot answer github:star');
}, 60_000);
