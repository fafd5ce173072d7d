import fs from 'node:fs';
import path from 'node:path';
import { checkPins, filesHash, skillHash } from '../../../bundle/skills/pins';
import { writeSkillsProject } from '../../support/skills-project';

describe('pins', () => {
  test('pins: nothing changed, nothing said; a team override added later changes the skill; a removed agent file changes the agent', async () => {
    const project = writeSkillsProject();
    try {
      const skill = { name: 'lw-notes', dir: path.join(project.root, '.claude/skills/lw-notes') };
      const agentFiles = [path.join(project.root, '.claude/skills/lw-agent-guide/SKILL.md'), path.join(project.root, '.claude/skills/lw-agent-guide/customize.toml')];
      const input = { agent: { id: 'lw-agent-guide', files: agentFiles, hash: await filesHash(agentFiles) }, skills: [{ ...skill, hash: await skillHash(skill, project.root) }], projectRoot: project.root };
      expect(await checkPins(input)).toEqual({ changed: [] });

      fs.mkdirSync(path.join(project.root, '_bmad/custom'), { recursive: true });
      fs.writeFileSync(path.join(project.root, '_bmad/custom/lw-notes.toml'), '[workflow]\ntemplate = "assets/other.md"\n');
      fs.rmSync(agentFiles[1]!);
      const { changed } = await checkPins(input);
      expect(changed).toHaveLength(2);
      expect(changed[0]).toContain('The agent lw-agent-guide changed on disk');
      expect(changed[1]).toContain('The skill lw-notes changed on disk');
      // A skill activated before hashes existed is not checked.
      expect(await checkPins({ skills: [skill], projectRoot: project.root })).toEqual({ changed: [] });
    } finally {
      project.cleanup();
    }
  });
});
