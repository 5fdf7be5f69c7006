/** Skills prepared at packaging (functions/core/skills/prepared.ts): the same answers as SkillLibrary over the files, and clear refusals. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HookError } from '../../functions/core/errors';
import { SkillLibrary } from '../../functions/core/skills/library';
import { PREPARED_SKILLS_FILE, PreparedSkills, preparedSkillEntries, preparedSkillsText } from '../../functions/core/skills/prepared';

const skillFile = (name: string, extra = '') => `---\nname: ${name}\ndescription: Does ${name} things\ntools: [get_pull_request]\n${extra}---\nInstructions of ${name}.\n`;

/** A config dir with user skills: one new, one shadowing a built-in, one invalid, one whose name does not match its folder. */
function configDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-skills-'));
  const put = (folder: string, text: string) => {
    mkdirSync(join(dir, 'skills', folder), { recursive: true });
    writeFileSync(join(dir, 'skills', folder, 'SKILL.md'), text);
  };
  put('release-notes', skillFile('release-notes'));
  put('code-review', skillFile('code-review'));
  put('broken', '---\nname: broken\n---\n');
  put('misnamed', skillFile('other-name'));
  return dir;
}

function preparedFrom(library: SkillLibrary): PreparedSkills {
  const out = mkdtempSync(join(tmpdir(), 'hookagent-prepared-skills-'));
  writeFileSync(join(out, PREPARED_SKILLS_FILE), preparedSkillsText(preparedSkillEntries(library)));
  return new PreparedSkills(out);
}

function thrown(run: () => unknown): HookError {
  try {
    run();
  } catch (error) {
    if (error instanceof HookError) return error;
    throw error;
  }
  throw new Error('expected a HookError');
}

test('every name loads or fails exactly as SkillLibrary does over the files', () => {
  const library = new SkillLibrary(configDir());
  const prepared = preparedFrom(library);
  expect(prepared.names()).toEqual(library.names());
  expect(prepared.names()).toEqual(['alert-triage', 'broken', 'code-review', 'issue-triage', 'misnamed', 'release-notes']);
  for (const name of [...library.names(), 'no-such-skill', 'Not A Name']) {
    let expected: unknown;
    try {
      expected = library.load(name);
    } catch (error) {
      expected = error;
    }
    if (!(expected instanceof HookError)) {
      expect(prepared.load(name)).toEqual(expected);
      continue;
    }
    const error = thrown(() => prepared.load(name));
    expect(error.code).toBe(expected.code);
    // A name that cannot be a skill's is simply not among the prepared ones.
    expect(error.message).toBe(name === 'Not A Name' ? `No skill named 'Not A Name'; available: ${library.names().join(', ')}` : expected.message);
  }
  expect(prepared.load('code-review').origin).toBe('user');
  expect(prepared.load('alert-triage').origin).toBe('built-in');
});

test('without a config dir: the built-in skills only', () => {
  const prepared = preparedFrom(new SkillLibrary(undefined));
  expect(prepared.names()).toEqual(['alert-triage', 'code-review', 'issue-triage']);
  expect(prepared.load('issue-triage').instructions.length).toBeGreaterThan(100);
});

test('the file is read at the first use, not when the source is made', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-prepared-skills-'));
  const prepared = new PreparedSkills(dir);
  writeFileSync(join(dir, PREPARED_SKILLS_FILE), preparedSkillsText(preparedSkillEntries(new SkillLibrary(undefined))));
  expect(prepared.names()).toContain('code-review');
});

test.each([
  ['missing', undefined, 'are missing'],
  ['not JSON', '---\nname: x\n', 'cannot be read ('],
  ['without the marker', JSON.stringify({ skills: {} }), 'are not skills prepared by this hookagent (format 1)'],
  ['another format', JSON.stringify({ hookagent_prepared_skills: 2, skills: {} }), 'are not skills prepared by this hookagent (format 1)'],
  ['an entry of the wrong shape', JSON.stringify({ hookagent_prepared_skills: 1, skills: { x: { skill: { name: 'x' } } } }), "hold a malformed entry for 'x'"],
  ['an entry under another name', JSON.stringify({ hookagent_prepared_skills: 1, skills: { x: { skill: { name: 'y', description: 'd', tools: [], instructions: 'i', origin: 'user' } } } }), "hold a malformed entry for 'x'"],
])('refused, on every use: %s', (_name, text, problem) => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-prepared-skills-'));
  if (text !== undefined) writeFileSync(join(dir, PREPARED_SKILLS_FILE), text);
  const prepared = new PreparedSkills(dir);
  for (let i = 0; i < 2; i++) {
    const error = thrown(() => prepared.load('code-review'));
    expect(error.code).toBe('skill_invalid');
    expect(error.message).toContain(`The prepared skills ${join(dir, PREPARED_SKILLS_FILE)} ${problem}`);
    expect(error.message).toMatch(/: package the service again \(npx osls package or deploy prepares them from the skills\)$/);
  }
});
