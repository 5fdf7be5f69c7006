/**
 * A config.yaml of comments only means every default, with LF or CRLF line ends (hunt 13,
 * config D4: with CRLF, Notepad's or git core.autocrlf's, it was refused as "config.yaml is
 * not valid YAML: expected a document, but the input is empty").
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCli, runCli, tempConfigDir } from '../support/cli';

beforeAll(() => buildCli(), 60_000);

const commentsOnly = ['# hookagent configuration', '# webhooks:', '#   github: { secret: ${GITHUB_WEBHOOK_SECRET} }', ''];

test.each([['LF', '\n'], ['CRLF', '\r\n']])('a config.yaml of comments only (%s) means every default', async (_name, eol) => {
  const dir = tempConfigDir('', 'hookagent-crlf-');
  writeFileSync(join(dir, 'config.yaml'), commentsOnly.join(eol));
  const listed = await runCli(['--config-dir', dir, 'webhook', 'list']);
  expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
}, 60_000);
