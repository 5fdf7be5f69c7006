/**
 * Skills as the deployed worker reads them: every skill the packaged config dir offers
 * (built-in and the user's, a user skill shadowing a built-in one) parsed once at
 * packaging (scripts/build-lambda.mjs) into `skills.json` beside the bundle, so the worker
 * bundle carries neither the YAML parser nor the built-in skills' text (issue 20). A skill
 * that does not parse is kept with its error and refused when a subscription uses it, as
 * SkillLibrary refuses it.
 */
import { join } from 'node:path';
import { HookError, isHookError } from '../errors';
import { isObject, readPreparedJson } from '../prepared-file';
import type { Skill } from './skill';
import type { SkillSource } from './source';

export const PREPARED_SKILLS_FILE = 'skills.json';
export const PREPARED_SKILLS_FORMAT = 1;
const MAX_PREPARED_BYTES = 16 * 1024 * 1024;

export type Entry = { skill: Skill } | { error: { code: 'skill_invalid'; message: string } };

/** Each name `source` offers, with its skill or why it cannot be used. */
export function preparedSkillEntries(source: SkillSource): Record<string, Entry> {
  const skills: Record<string, Entry> = {};
  for (const name of source.names()) {
    try {
      skills[name] = { skill: source.load(name) };
    } catch (error) {
      if (!isHookError(error)) throw error;
      skills[name] = { error: { code: 'skill_invalid', message: error.message } };
    }
  }
  return skills;
}

/** The file's text for those entries. */
export function preparedSkillsText(skills: Record<string, Entry>): string {
  return `${JSON.stringify({ hookagent_prepared_skills: PREPARED_SKILLS_FORMAT, skills }, null, 2)}\n`;
}

const isSkill = (value: unknown): value is Skill => isObject(value) && typeof value.name === 'string' && typeof value.description === 'string'
  && typeof value.instructions === 'string' && Array.isArray(value.tools) && value.tools.every((t) => typeof t === 'string') && (value.origin === 'built-in' || value.origin === 'user');

/** Reads `{dir}/skills.json` at the first use (not at module init); a file that cannot be used fails each load with how to fix it. */
export class PreparedSkills implements SkillSource {
  private entries: Map<string, Entry> | undefined;

  constructor(private readonly dir: string) {}

  names(): string[] {
    return [...this.read().keys()].sort();
  }

  load(name: string): Skill {
    const entry = this.read().get(name);
    if (!entry) throw new HookError('skill_not_found', `No skill named '${name}'; available: ${this.names().join(', ')}`);
    if ('error' in entry) throw new HookError('skill_invalid', entry.error.message);
    return entry.skill;
  }

  private read(): Map<string, Entry> {
    if (this.entries) return this.entries;
    const file = join(this.dir, PREPARED_SKILLS_FILE);
    const refuse = (problem: string, cause?: unknown) => new HookError('skill_invalid', `The prepared skills ${file} ${problem}: package the service again (npx osls package or deploy prepares them from the skills)`, { cause });
    const read = readPreparedJson(file, MAX_PREPARED_BYTES, 'the prepared skills');
    if (!read.ok) throw refuse(read.failure === 'missing' ? 'are missing' : `cannot be read (${read.detail})`, read.cause);
    const document = read.document;
    if (!isObject(document) || document.hookagent_prepared_skills !== PREPARED_SKILLS_FORMAT || !isObject(document.skills)) {
      throw refuse(`are not skills prepared by this hookagent (format ${PREPARED_SKILLS_FORMAT})`);
    }
    const entries = new Map<string, Entry>();
    for (const [name, entry] of Object.entries(document.skills)) {
      const valid = isObject(entry) && (('skill' in entry && isSkill(entry.skill) && entry.skill.name === name) || ('error' in entry && isObject(entry.error) && typeof entry.error.message === 'string'));
      if (!valid) throw refuse(`hold a malformed entry for '${name}'`);
      entries.set(name, entry as Entry);
    }
    this.entries = entries;
    return entries;
  }
}
