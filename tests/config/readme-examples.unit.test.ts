/** Every config.yaml example in the README parses as it is written: users copy them (the key reference once held `…` placeholders that did not). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../functions/core/config/load';

const README = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');

/** ```yaml blocks whose first key is a config.yaml section, with the README line they start on. */
const examples = [...README.matchAll(/```ya?ml\n([\s\S]*?)```/g)]
  .filter((m) => /^(webhooks|agent|delivery|aws)\s*:/m.test(m[1] as string) && !/^\s*(receivers|route|global)\s*:/m.test(m[1] as string))
  .map((m) => ({ line: README.slice(0, m.index).split('\n').length + 1, yaml: m[1] as string }));

test('the README has config examples to check', () => {
  expect(examples.length).toBeGreaterThanOrEqual(4);
});

test.each(examples.map((e) => [e.line, e.yaml]))('the example at README line %i parses', (_line, yaml) => {
  const parsed = parseConfig(yaml as string);
  expect(parsed.ok ? 'valid' : parsed.error.message).toBe('valid');
});
