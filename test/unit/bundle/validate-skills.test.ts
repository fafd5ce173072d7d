/**
 * `validate` on projects of skills: agent skills are initialised as a session would start them and
 * their menus checked (a skill the menu names must exist: a problem); what the specification says
 * of each skill, and what discovery met, are warnings.
 */
import fs from 'node:fs';
import path from 'node:path';
import { similarSkillName } from '../../../bundle/skills/project-skills';
import { checkBundle } from '../../../bundle/validate';
import { writeSkillsProject } from '../../support/skills-project';
import { CORPUS, corpusPresent } from '../../support/corpus';

describe('validate: skills', () => {
  test('validate: a project of skills of our own has no problem; a broken skill is a warning naming its field', async () => {
    const project = writeSkillsProject();
    try {
      expect(await checkBundle(project.root)).toMatchObject({ problems: [], warnings: [], checked: { agents: 1, commands: 2 } });
      fs.mkdirSync(path.join(project.root, '.claude/skills/Bad_Name'));
      fs.writeFileSync(
        path.join(project.root, '.claude/skills/Bad_Name/SKILL.md'),
        '---\nname: Bad_Name\ndescription: A skill whose name breaks the rules.\n---\nSee [guide](references/missing.md).\n',
      );
      const report = await checkBundle(project.root);
      expect(report.problems).toEqual([]);
      const fields = report.warnings.map((w) => `${w.file} ${w.field}`);
      expect(fields).toContain(`${path.join(project.root, '.claude/skills/Bad_Name/SKILL.md')} name`);
      expect(report.warnings.some((w) => w.message.includes('references/missing.md'))).toBe(true);
    } finally {
      project.cleanup();
    }
  });

  test('validate: a menu item naming a skill the project does not have is a problem', async () => {
    const project = writeSkillsProject();
    try {
      const customize = path.join(project.root, '.claude/skills/lw-agent-guide/customize.toml');
      fs.writeFileSync(customize, fs.readFileSync(customize, 'utf8').replace('skill = "lw-notes"', 'skill = "lw-gone"'));
      const report = await checkBundle(project.root);
      expect(report.problems).toEqual([
        { file: path.join(project.root, '.claude/skills/lw-agent-guide/SKILL.md'), field: 'commands[TP].skill', message: "No skill named lw-gone in the project's skills folders" },
      ]);
      // A name with a word added to the skill's (as BMAD 6.3's analyst names bmad-product-brief-preview): the skill is suggested.
      fs.writeFileSync(customize, fs.readFileSync(customize, 'utf8').replace('skill = "lw-gone"', 'skill = "lw-notes-preview"'));
      expect((await checkBundle(project.root)).problems.map((p) => p.message)).toEqual(["No skill named lw-notes-preview in the project's skills folders (did you mean lw-notes?)"]);
    } finally {
      project.cleanup();
    }
  });

  const INSTALLS = ['installed/v6.8.0-claude-code', 'installed/v6.11.0-claude-code'];
  if (corpusPresent('validate-skills', INSTALLS)) {
    test.each(INSTALLS)('validate: every agent skill of %s starts and its menu names skills that exist', async (part) => {
      const report = await checkBundle(path.join(CORPUS, part));
      expect(report.problems).toEqual([]);
      expect(report.checked.agents).toBeGreaterThanOrEqual(5);
      expect(report.checked.commands).toBeGreaterThan(10);
    });
  }

  test('similarSkillName: the name with a word added or dropped at its end, the closest first; never a different skill of similar spelling', () => {
    const names = ['bmad-create-prd', 'bmad-edit-prd', 'bmad-product-brief', 'bmad-product-brief-full-guided', 'bmad-validate-prd'];
    expect(similarSkillName('bmad-product-brief-preview', names)).toBe('bmad-product-brief');
    expect(similarSkillName('bmad-product', names)).toBe('bmad-product-brief');
    expect(similarSkillName('bmad-product-brief-full', names)).toBe('bmad-product-brief');
    expect(similarSkillName('bmad-create-prd-v2', names)).toBe('bmad-create-prd');
    expect(similarSkillName('bmad-update-prd', names)).toBeUndefined();
    expect(similarSkillName('bmad-product-bri', names)).toBeUndefined();
    expect(similarSkillName('bmad-create-prd', ['bmad-create-prd'])).toBeUndefined();
  });
});
