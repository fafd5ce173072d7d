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
      const input = {
        agent: { id: 'lw-agent-guide', files: agentFiles, hash: await filesHash(agentFiles) },
        skills: [{ ...skill, hash: await skillHash(skill, project.root) }],
        projectRoot: project.root,
      };
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

describe('pins of a session', () => {
  test('pins: a team override of an agent skill added after the session started is a change of the agent; so is a central config layer', async () => {
    const { initializeAgent } = await import('../../../bundle/initialize-agent');
    const project = writeSkillsProject();
    try {
      const started = await initializeAgent({ bundlePath: project.root, agentId: 'lw-agent-guide' });
      const agent = started.pin!;
      expect(await checkPins({ agent, skills: [], projectRoot: project.root })).toEqual({ changed: [] });
      fs.mkdirSync(path.join(project.root, '_bmad/custom'), { recursive: true });
      fs.writeFileSync(path.join(project.root, '_bmad/custom/lw-agent-guide.toml'), '[agent]\nicon = "🦜"\n');
      expect((await checkPins({ agent, skills: [], projectRoot: project.root })).changed).toEqual([expect.stringContaining('The agent lw-agent-guide changed on disk')]);
      fs.rmSync(path.join(project.root, '_bmad/custom/lw-agent-guide.toml'));
      expect(await checkPins({ agent, skills: [], projectRoot: project.root })).toEqual({ changed: [] });
      fs.writeFileSync(path.join(project.root, '_bmad/custom/config.user.toml'), '[core]\nuser_name = "Bo"\n');
      expect((await checkPins({ agent, skills: [], projectRoot: project.root })).changed).toHaveLength(1);
    } finally {
      project.cleanup();
    }
  });
});
