/** The starter config.yaml holds, commented out, every line the README's walkthroughs say to uncomment; uncommented, it parses. */
import { CONFIG_TEMPLATE } from '../../cli/local/first-run';
import { parseConfig } from '../../functions/core/config/load';

const commented = (line: string) => /^\s*#\s*/.test(line) ? line.replace(/^\s*#\s*/, '') : undefined;

test('the walkthroughs\' lines are in the starter config, and uncommenting them gives a valid config', () => {
  const lines = CONFIG_TEMPLATE.split('\n');
  for (const wanted of ['github: { secret: ${GITHUB_WEBHOOK_SECRET} }', 'gitlab: { secret: ${GITLAB_WEBHOOK_SECRET} }', 'codehost:', 'github: { token: ${GITHUB_TOKEN} }', 'gitlab: { token: ${GITLAB_TOKEN} }', 'teamchat:  { provider: slack, webhook_url: ${SLACK_WEBHOOK_URL} }']) {
    expect([wanted, lines.some((l) => commented(l)?.startsWith(wanted))]).toEqual([wanted, true]);
  }
  // Uncommented as a user does: the `# ` goes, the indentation after it stays.
  const uncommented = lines.map((l) => (/^(github|gitlab|codehost|teamchat|messenger|public_url)\b/.test(commented(l) ?? '') ? l.replace(/^(\s*)# /, '$1') : l)).join('\n');
  const parsed = parseConfig(uncommented);
  expect(parsed.ok ? [] : parsed.error.issues).toEqual([]);
});
