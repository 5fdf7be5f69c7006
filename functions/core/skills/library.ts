/** Finding skills: the built-in ones, then `{config_dir}/skills/<name>/SKILL.md`. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HookError } from '../errors';
import { BUILTIN_SKILL_TEXTS } from './builtin';
import { parseSkill, SKILL_NAME, type Skill } from './skill';
import type { SkillSource } from './source';

export class SkillLibrary implements SkillSource {
  constructor(private readonly configDir: string | undefined) {}

  /** Names of every available skill, sorted; user skills may shadow built-in ones. */
  names(): string[] {
    const names = new Set(Object.keys(BUILTIN_SKILL_TEXTS));
    const dir = this.userDir();
    if (dir && existsSync(dir)) {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory() && SKILL_NAME.test(entry.name) && existsSync(join(dir, entry.name, 'SKILL.md'))) names.add(entry.name);
      }
    }
    return [...names].sort();
  }

  /** Loads one skill; unknown or invalid skills are HookErrors naming what is available. */
  load(name: string): Skill {
    if (!SKILL_NAME.test(name)) throw new HookError('skill_not_found', `'${name}' is not a skill name`);
    const dir = this.userDir();
    const userFile = dir ? join(dir, name, 'SKILL.md') : undefined;
    let parsed;
    if (userFile && existsSync(userFile)) parsed = parseSkill(readFileSync(userFile, 'utf8'), 'user', userFile);
    else if (BUILTIN_SKILL_TEXTS[name] !== undefined) parsed = parseSkill(BUILTIN_SKILL_TEXTS[name], 'built-in', `built-in skill ${name}`);
    else throw new HookError('skill_not_found', `No skill named '${name}'; available: ${this.names().join(', ')}`);
    if (!parsed.ok) throw new HookError(parsed.error.code, parsed.error.message);
    if (parsed.value.name !== name) throw new HookError('skill_invalid', `${name}/SKILL.md declares name '${parsed.value.name}'; it must match its folder`);
    return parsed.value;
  }

  private userDir(): string | undefined {
    return this.configDir ? join(this.configDir, 'skills') : undefined;
  }
}
