/** Where config.yaml lives and reading it (DESIGN §2.3). */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readFileBounded } from '../bounded-read';
import { fail, isHookError, type Result } from '../errors';
import { MAX_CONFIG_BYTES } from './size';
import { parseConfig, type ConfigError } from './load';
import type { Config } from './types';

/** `--config-dir`, else `$HOOKAGENT_CONFIG_DIR`, else `~/.hookagent`. */
export function configDir(option?: string, env: NodeJS.ProcessEnv = process.env): string {
  // Only an option left out falls back: an empty one is refused by the CLI (main.ts).
  if (option !== undefined && option !== '') return option;
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
    text = readFileBounded(configPath(dir), MAX_CONFIG_BYTES, 'config.yaml', 'the most a configuration file may hold');
  } catch (error) {
    if (isHookError(error) && error.code === 'too_large') {
      return fail({ code: 'config_invalid', message: `Invalid configuration:\n  ${error.message}`, issues: [{ path: '', message: error.message }] });
    }
    const cause = ((error as Error).cause ?? error) as NodeJS.ErrnoException;
    if (cause.code === 'ENOENT') text = '';
    else {
      return fail({
        code: 'config_invalid',
        message: `Cannot read ${configPath(dir)}: ${cause.message}`,
        issues: [{ path: '', message: cause.message }],
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
