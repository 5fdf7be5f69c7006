/** The committed, generated config validator is the one schema.ts compiles to today. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configValidatorSource, GENERATED_VALIDATOR_PATH } from '../../scripts/config-validator';

test('config-validator.generated.ts matches schema.ts (run `npm run generate` after changing the schema)', () => {
  const committed = readFileSync(join(__dirname, '..', '..', GENERATED_VALIDATOR_PATH), 'utf8');
  expect(committed === configValidatorSource()).toBe(true);
});
