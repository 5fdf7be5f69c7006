/** Where the worker finds skills: the files (SkillLibrary: serve, the CLI) or what packaging prepared from them (PreparedSkills: Lambda). */
import type { Skill } from './skill';

export interface SkillSource {
  /** Names of every available skill, sorted. */
  names(): string[];
  /** One skill; an unknown or invalid one is a HookError (`skill_not_found`, `skill_invalid`) naming what is available. */
  load(name: string): Skill;
}
