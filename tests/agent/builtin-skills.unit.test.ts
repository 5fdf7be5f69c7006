/** Every built-in skill loads and names only tools that exist (issue-triage's front matter once did not parse: `key: value: more` is not YAML). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_TOOLS } from '../../functions/core/agent/tools';
import { BUILTIN_SKILL_TEXTS } from '../../functions/core/skills/builtin';
import { SkillLibrary } from '../../functions/core/skills/library';
import { parseSkill } from '../../functions/core/skills/skill';

const library = new SkillLibrary(undefined);

test.each(Object.keys(BUILTIN_SKILL_TEXTS))('the built-in skill %s loads, and its tools exist', (name) => {
  const skill = library.load(name);
  expect(skill).toMatchObject({ name, origin: 'built-in' });
  expect(skill.description.length).toBeGreaterThan(20);
  expect(skill.instructions.length).toBeGreaterThan(100);
  // http_get is not in BUILTIN_TOOLS: it is made per run from agent.http (agent/http-get.ts).
  expect(skill.tools.filter((tool) => tool !== 'http_get' && !(tool in BUILTIN_TOOLS))).toEqual([]);
});

test('the SKILL.md example in the README loads, and its tools exist', () => {
  const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
  const examples = [...readme.matchAll(/```markdown\n([\s\S]*?)```/g)].map((m) => (m[1] as string).replace(/^ {2}/gm, '')).filter((text) => text.startsWith('---\n'));
  expect(examples).toHaveLength(1);
  const parsed = parseSkill(examples[0] as string, 'user', 'README example');
  expect(parsed.ok ? parsed.value.name : parsed.error.message).toBe('release-notes');
  if (parsed.ok) expect(parsed.value.tools.filter((tool) => !(tool in BUILTIN_TOOLS))).toEqual([]);
});
