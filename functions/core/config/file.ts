/** Where config.yaml lives and reading it (DESIGN §2.3). */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fail, type Result } from '../errors';
import { parseConfig, type ConfigError } from './load';
import type { Config } from './types';

/** `--config-dir`, else `$HOOKAGENT_CONFIG_DIR`, else `~/.hookagent`. */
export function configDir(option?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (option) return option;
  if (env.HOOKAGENT_CONFIG_DIR) return env.HOOKAGENT_CONFIG_DIR;
  return join(homedir(), '.hookagent');
}

export function configPath(dir: string): string {
  return join(dir, 'config.yaml');
}

/** Reads `{dir}/config.yaml`; a missing file means every default (and no secrets: fail closed). */
export function readConfigFile(dir: string): Result<Config, ConfigError> {
  let text: string;
  try {
    text = readFileSync(configPath(dir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') text = '';
    else {
      return fail({
        code: 'config_invalid',
        message: `Cannot read ${configPath(dir)}: ${(error as Error).message}`,
        issues: [{ path: '', message: (error as Error).message }],
      });
    }
  }
  return parseConfig(text);
}

/** SecretSource over environment variables (local mode; the first source tried on AWS). */
export function environmentSecrets(env: NodeJS.ProcessEnv = process.env) {
  return {
    get: async (name: string): Promise<string | undefined> => env[name],
  };
}
