/**
 * A subagent's agent (bundle/subagent.ts through initializeAgent): made of the instructions a
 * `run_subagent` call gives, in the project of the agent that started it. Its system prompt carries
 * the instructions (a file's body without its front matter, then the text) in place of the menu,
 * with no conversation rules; the project's config still loads. Instructions that are missing, too
 * long, outside the roots or in a secret file fail with a `SubagentInstructionsError` naming the file
 * or field.
 */
import fs from 'node:fs';
import path from 'node:path';
import { initializeAgent } from '../../../bundle/initialize-agent';
import { MAX_SUBAGENT_INSTRUCTIONS_BYTES, SubagentInstructionsError } from '../../../bundle/subagent';
import { writeSkillsProject } from '../../support/skills-project';

let project: ReturnType<typeof writeSkillsProject>;

beforeAll(() => {
  project = writeSkillsProject('lw-subagent-');
  fs.mkdirSync(path.join(project.root, '.claude/skills/lw-notes/agents'), { recursive: true });
  fs.writeFileSync(
    path.join(project.root, '.claude/skills/lw-notes/agents/reviewer.md'),
    '---\nname: reviewer\ndescription: Reviews notes\n---\n# Reviewer\n\nCheck every tide time against the table.\n',
  );
  fs.writeFileSync(path.join(project.root, '.env'), 'KEY=1\n');
});

afterAll(() => project.cleanup());

const start = (subagent: Parameters<typeof initializeAgent>[0]['subagent']) => initializeAgent({ bundlePath: project.root, agentId: 'lw-agent-guide', subagent });

test('the file body and the text become the instructions; the menu, persona and conversation rules of the starting agent are not there', async () => {
  const init = await start({
    name: 'reviewer',
    instructionsFile: 'agents/reviewer.md',
    instructions: 'Answer in one paragraph.',
    activeSkillDirs: [path.join(project.root, '.claude/skills/lw-notes')],
  });
  const prompt = String(init.messages[0]!.content);
  expect(prompt).toContain('You are reviewer, a subagent started by another agent to do one task.');
  expect(prompt).toContain('YOUR INSTRUCTIONS (from the agent that started you):\n# Reviewer\n\nCheck every tide time against the table.\n\nAnswer in one paragraph.');
  expect(prompt).not.toContain('name: reviewer');
  expect(prompt).not.toContain('CONVERSATION STYLE');
  expect(prompt).not.toContain('You are Gus');
  expect(prompt).not.toContain('MENU (numbered');
  // The project's skills and config are the starting agent's.
  expect(prompt).toContain('<available_skills>');
  expect(init.messages.some((m) => String(m.content).includes('user_name: Ada'))).toBe(true);
  expect(init.agent.id).toBe('subagent:reviewer');
});

test('a {project-root} path works without active skills; text alone works', async () => {
  const fromRoot = await start({ name: 'r', instructionsFile: '{project-root}/.claude/skills/lw-notes/agents/reviewer.md' });
  expect(String(fromRoot.messages[0]!.content)).toContain('Check every tide time');
  const textOnly = await start({ name: 'helper', instructions: 'List the files.' });
  expect(String(textOnly.messages[0]!.content)).toContain('YOUR INSTRUCTIONS (from the agent that started you):\nList the files.');
});

test.each([
  [{ name: 'x', instructions: '   ' }, 'Subagent instructions are empty: give instructions or instructions_file'],
  [{ name: 'x', instructions: 'a'.repeat(MAX_SUBAGENT_INSTRUCTIONS_BYTES + 1) }, `more than the ${MAX_SUBAGENT_INSTRUCTIONS_BYTES} a subagent takes`],
  [{ name: 'x', instructionsFile: '/etc/hostname' }, 'Subagent instructions file /etc/hostname could not be read'],
  [{ name: 'x', instructionsFile: '{project-root}/.env' }, 'Secret file refused'],
  [{ name: 'x', instructionsFile: 'agents/missing.md' }, 'Subagent instructions file agents/missing.md could not be read'],
])('bad instructions fail with a SubagentInstructionsError: %#', async (subagent, message) => {
  const failure = await start(subagent).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(SubagentInstructionsError);
  expect((failure as Error).message).toContain(message);
});
