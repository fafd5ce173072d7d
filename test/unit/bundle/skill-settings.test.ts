/**
 * The session's skill settings: a folder of skills outside the project (`skillFolders`) and the
 * user's own skills (`userSkills`, under the home folder) join the catalog after the project's,
 * and activate and read through the same guards.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { initializeAgent } from '../../../bundle/initialize-agent';
import { activateSkillTool } from '../../../activities/tools/activate-skill';
import { readFileTool } from '../../../activities/tools/read-file';
import { writeSkillsProject } from '../../support/skills-project';

function writeSkill(folder: string, name: string, body: string): void {
  fs.mkdirSync(path.join(folder, name, 'references'), { recursive: true });
  fs.writeFileSync(path.join(folder, name, 'SKILL.md'), `---\nname: ${name}\ndescription: The ${name} skill, for tests.\n---\n${body}\n`);
  fs.writeFileSync(path.join(folder, name, 'references/more.md'), `more of ${name}\n`);
}

describe('skill settings', () => {
  test("skillFolders: an extra folder of skills joins the catalog after the project's; its skill activates and its files read", async () => {
    const project = writeSkillsProject();
    const extra = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lw-extra-skills-')));
    try {
      writeSkill(extra, 'lw-extra', 'Read references/more.md.');
      // A skill of the same name as the project's loses to it.
      writeSkill(extra, 'lw-notes', 'Not the project one.');
      const started = await initializeAgent({ bundlePath: project.root, agentId: 'lw-agent-guide', skillFolders: [extra] });
      expect(started.messages[0]!.content).toContain('<skill><name>lw-extra</name>');
      expect(started.context.skillFolders).toEqual([path.join(project.root, '.claude/skills'), extra]);
      expect(started.warnings.some((w) => w.includes('lw-notes') && w.includes('shadowed'))).toBe(true);
      const activated = await activateSkillTool(started.context, { name: 'lw-extra' });
      expect(activated).toMatchObject({ success: true, skill: { name: 'lw-extra', dir: path.join(extra, 'lw-extra') } });
      // Outside the project, {skill-root} is written as the folder itself.
      expect(String(activated.content)).toContain(`Skill directory: ${path.join(extra, 'lw-extra')}`);
      const context = { ...started.context, activeSkills: [activated.skill as { name: string; dir: string }] };
      expect(await readFileTool(context, { file_path: 'references/more.md' })).toMatchObject({ success: true, content: 'more of lw-extra\n' });
      const notes = await activateSkillTool(started.context, { name: 'lw-notes' });
      expect(notes).toMatchObject({ success: true, skill: { dir: path.join(project.root, '.claude/skills/lw-notes') } });
      // A name with a word too many: the error suggests the skill, then lists them all.
      const missing = await activateSkillTool(started.context, { name: 'lw-extra-preview' });
      expect(missing).toMatchObject({ success: false });
      expect(missing.error).toMatch(/^No skill named lw-extra-preview \(did you mean lw-extra\?\); the skills are: .*lw-extra/);
    } finally {
      project.cleanup();
      fs.rmSync(extra, { recursive: true, force: true });
    }
  });

  test("userSkills: the user's skills join only when asked", async () => {
    const project = writeSkillsProject();
    const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lw-home-')));
    // Jest's process.env is its own copy: the home folder is given where discovery asks for it.
    const homedir = jest.spyOn(os, 'homedir').mockReturnValue(home);
    try {
      writeSkill(path.join(home, '.agents/skills'), 'lw-mine', 'Mine.');
      const without = await initializeAgent({ bundlePath: project.root, agentId: 'lw-agent-guide' });
      expect(without.messages[0]!.content).not.toContain('lw-mine');
      const withUser = await initializeAgent({ bundlePath: project.root, agentId: 'lw-agent-guide', userSkills: true });
      expect(withUser.messages[0]!.content).toContain('<skill><name>lw-mine</name>');
      expect(await activateSkillTool(withUser.context, { name: 'lw-mine' })).toMatchObject({ success: true });
    } finally {
      homedir.mockRestore();
      project.cleanup();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('skill settings on the command line', () => {
  test('sandboxSettings: --user-skills and --skills-folder become the session settings, folders made absolute', async () => {
    const { sandboxSettings } = await import('../../../cli/commands/session-commands');
    const settings = sandboxSettings({ projectRoot: os.tmpdir(), userSkills: true, skillsFolder: ['team-skills', '/opt/skills'] });
    expect(settings).toMatchObject({ userSkills: true, skillFolders: [path.resolve('team-skills'), '/opt/skills'] });
    expect(sandboxSettings({ projectRoot: os.tmpdir() })).not.toHaveProperty('userSkills');
  });
});

describe('skill settings in inspect', () => {
  test("inspect: --skills-folder shows the folder's skills in the listing and in the agent's prompt", async () => {
    const { inspectBundle, listProject } = await import('../../../bundle/inspect');
    const project = writeSkillsProject();
    const extra = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lw-inspect-skills-')));
    try {
      writeSkill(extra, 'lw-extra', 'Extra.');
      expect((await listProject(project.root)).skills.map((s) => s.name)).not.toContain('lw-extra');
      const listing = await listProject(project.root, { skillFolders: [extra] });
      expect(listing.skills.find((s) => s.name === 'lw-extra')).toMatchObject({ folder: extra, scope: 'extra' });
      const inspection = await inspectBundle(project.root, 'lw-agent-guide', { skillFolders: [extra] });
      expect(inspection.systemPrompt).toContain('<skill><name>lw-extra</name>');
    } finally {
      project.cleanup();
      fs.rmSync(extra, { recursive: true, force: true });
    }
  });
});
