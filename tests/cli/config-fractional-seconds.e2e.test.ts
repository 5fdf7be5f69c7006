/**
 * Hunt 9 D4 (the built CLI): `agent.timeout: 1.5` and `delivery.timeout: 0.5`, plain seconds
 * written as YAML numbers, are taken as the quoted forms are; before, every command exited 1
 * with "agent.timeout: must be a string or a integer".
 */
import { buildCli, hkIn, tempConfigDir } from '../support/cli';

beforeAll(() => buildCli(), 60_000);

test.each([
  ['quoted', 'agent: { timeout: "1.5" }\ndelivery: { timeout: "0.5" }\n'],
  ['unquoted', 'agent: { timeout: 1.5 }\ndelivery: { timeout: 0.5 }\n'],
])('%s plain seconds with a fraction are accepted', async (_form, yaml) => {
  const result = await hkIn(tempConfigDir(yaml, 'hookagent-duration-'), 'webhook', 'list');
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
});
