/**
 * A skill: `<name>/SKILL.md` with YAML front matter (`name`, `description`, optional
 * `tools`) and instructions as its body. Built-in skills ship with the code; user skills
 * live in `{config_dir}/skills/<name>/SKILL.md`.
 */
import * as yaml from 'js-yaml';
import { fail, ok, type Result } from '../errors';

export interface Skill {
  name: string;
  description: string;
  /** Tools the skill may use; a tool not listed here is refused. */
  tools: string[];
  instructions: string;
  origin: 'built-in' | 'user';
}

export interface SkillError {
  code: 'skill_invalid';
  message: string;
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;
export const SKILL_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export function parseSkill(text: string, origin: Skill['origin'], where: string): Result<Skill, SkillError> {
  const bad = (message: string) => fail<SkillError>({ code: 'skill_invalid', message: `${where}: ${message}` });
  const match = FRONT_MATTER.exec(text);
  if (!match) return bad('must start with YAML front matter between --- lines (name, description, optional tools)');
  let meta: unknown;
  try {
    meta = yaml.load(match[1] as string, { schema: yaml.CORE_SCHEMA });
  } catch (error) {
    return bad(`front matter is not valid YAML (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`);
  }
  if (!meta || typeof meta !== 'object' || Array.isArray(meta)) return bad('front matter must be a mapping');
  const { name, description, tools, ...rest } = meta as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return bad(`unknown front matter key(s): ${unknown.join(', ')}; allowed: name, description, tools`);
  if (typeof name !== 'string' || !SKILL_NAME.test(name)) return bad('name must be lower-case letters, digits, - and _');
  if (typeof description !== 'string' || description.trim() === '') return bad('description is required');
  if (tools !== undefined && (!Array.isArray(tools) || tools.some((t) => typeof t !== 'string'))) return bad('tools must be a list of tool names');
  const instructions = (match[2] as string).trim();
  if (!instructions) return bad('the instructions (the text after the front matter) are empty');
  return ok({ name, description: description.trim(), tools: (tools as string[] | undefined) ?? [], instructions, origin });
}
