/** A Lambda config dir as packaging leaves it: config.yaml prepared into config.json (scripts/check-config.ts does the same). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../functions/core/config/load';
import { PREPARED_CONFIG_FILE, preparedConfigText } from '../../functions/core/config/prepared';

export function preparedConfigDir(yaml: string, prefix = 'hookagent-lambda-'): string {
  const parsed = parseConfig(yaml);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, PREPARED_CONFIG_FILE), preparedConfigText(parsed.value));
  return dir;
}
