import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseAgent } from '../../../bundle/agent-parser';
import { loadBundle, type BundleInfo } from '../../../bundle/bundle-loader';
import { fileLoadTargets, processCriticalActions } from '../../../bundle/critical-actions';
import { CriticalActionError, SecurityViolationError } from '../../../bundle/errors';
import { pathVariables } from '../../../bundle/variables';
import { compiledAgent, makeBundle, makeInstalledTree, makeTempDir, sourceAgent, SPEC_CONFIG, writeTree } from './fixtures';

let tmp: string;
beforeEach(async () => {
  tmp = await makeTempDir();
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

function varsOf(bundle: BundleInfo): Record<string, string> {
  return pathVariables({ bundleRoot: bundle.bundleRoot, coreRoot: bundle.coreRoot, projectRoot: bundle.projectRoot });
}

async function run(actions: string[], extra: Record<string, string> = {}, strict = false) {
  const root = await makeBundle(path.join(tmp, 'b'), { agent: sourceAgent(actions) });
  await writeTree(root, extra);
  const bundle = await loadBundle(root);
  const agentFile = path.join(root, 'agents/alex.md');
  const agent = parseAgent(await fs.readFile(agentFile, 'utf8'), agentFile);
  return {
    root,
    result: await processCriticalActions(agent, { bundle, agentFile, variables: varsOf(bundle), date: '2025-10-05', ...(strict ? { strict } : {}) }),
  };
}

/** The error of a strict run (a missing file or an unknown variable throws only with `strict`). */
async function failure(actions: string[], extra: Record<string, string> = {}): Promise<CriticalActionError> {
  const error = await run(actions, extra, true).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(CriticalActionError);
  return error as CriticalActionError;
}

describe('critical-actions', () => {
  test('processCriticalActions: the spec example, config loaded then instructions resolved', async () => {
    const { root, result } = await run([
      'Load into memory {bundle-root}/config.yaml and set variables: project_name, output_folder, user_name',
      "Remember the user's name is {user_name}",
      'ALWAYS communicate in {communication_language}',
    ]);
    expect(result.messages).toEqual([
      { role: 'system', content: `[Critical Action] Loaded file: ${path.join(root, 'config.yaml')}\n\n${SPEC_CONFIG}` },
      { role: 'system', content: "[Critical Instruction] Remember the user's name is Bryan" },
      { role: 'system', content: '[Critical Instruction] ALWAYS communicate in English' },
    ]);
    expect(result.variables).toMatchObject({
      user_name: 'Bryan',
      output_folder: path.join(root, 'docs'),
      communication_language: 'English',
      config_source: path.join(root, 'config.yaml'),
      'bundle-root': root,
    });
    expect(result.configPath).toBe(path.join(root, 'config.yaml'));
    expect(result.loadedFiles).toEqual([path.join(root, 'config.yaml')]);
  });

  test('processCriticalActions: variables are known only after the config that sets them', async () => {
    const { result } = await run(["Remember the user's name is {user_name}", 'Load into memory {bundle-root}/config.yaml and set variables: user_name', 'Greet {user_name} on {date}']);
    expect(result.messages[0].content).toBe("[Critical Instruction] Remember the user's name is {user_name}");
    expect(result.messages[2].content).toBe('[Critical Instruction] Greet Bryan on 2025-10-05');
  });

  test('processCriticalActions: the real variants of the load instruction', async () => {
    const extra = { 'data/notes.md': 'notes\n', 'data/team.yaml': 'lead: Kim\n', 'data/other.md': 'other\n' };
    const { root, result } = await run(
      [
        'Load into memory {bundle-root}/config.yaml and set variable project_name, output_folder, user_name',
        'Load COMPLETE file {bundle-root}/data/notes.md into permanent memory and follow ALL rules within',
        'Load into memory {bundle-root}/data/team.yaml and set variables',
        'CRITICAL: Load {project-root}/data/other.md',
        'Lead is {lead}',
      ],
      extra,
    );
    expect(result.loadedFiles).toEqual(['config.yaml', 'data/notes.md', 'data/team.yaml', 'data/other.md'].map((f) => path.join(root, f)));
    expect(result.messages.map((m) => m.content.split('\n')[0])).toEqual([
      `[Critical Action] Loaded file: ${path.join(root, 'config.yaml')}`,
      `[Critical Action] Loaded file: ${path.join(root, 'data/notes.md')}`,
      `[Critical Action] Loaded file: ${path.join(root, 'data/team.yaml')}`,
      `[Critical Action] Loaded file: ${path.join(root, 'data/other.md')}`,
      '[Critical Instruction] Lead is Kim',
    ]);
    expect(result.messages[1].content).toBe(`[Critical Action] Loaded file: ${path.join(root, 'data/notes.md')}\n\nnotes\n`);
    // a non-config file does not set variables, the first config stays the config source
    expect(result.configPath).toBe(path.join(root, 'config.yaml'));
  });

  test('processCriticalActions: a compiled activation step that loads the config', async () => {
    const project = await makeInstalledTree(path.join(tmp, 'proj'));
    const bundle = await loadBundle(project);
    const file = path.join(project, 'bmad/bmm/agents/pm.md');
    const agent = parseAgent(compiledAgent('bmm', 'John'), file);
    const result = await processCriticalActions(agent, { bundle, agentFile: file, variables: varsOf(bundle) });
    expect(result.messages.map((m) => m.content.split('\n')[0])).toEqual([
      '[Critical Instruction] Load persona from this current agent file (already in context)',
      `[Critical Action] Loaded file: ${path.join(project, 'bmad/bmm/config.yaml')}`,
      "[Critical Instruction] Remember: user's name is BMad",
    ]);
    expect(result.variables.dev_story_location).toBe(path.join(project, 'docs/stories'));
  });

  test('processCriticalActions: the same file named twice is loaded once', async () => {
    const { result } = await run(['Load into memory {bundle-root}/config.yaml and set variables: user_name', 'Load into memory {project-root}/config.yaml and set variable user_name']);
    expect(result.messages).toHaveLength(1);
    expect(result.loadedFiles).toHaveLength(1);
  });

  test('processCriticalActions: only the files named are read, workflows stay unloaded', async () => {
    const { result } = await run(['Load into memory {bundle-root}/config.yaml and set variables: user_name']);
    expect(result.messages.some((m) => m.content.includes('workflow.yaml'))).toBe(false);
    expect(result.loadedFiles.every((f) => f.endsWith('config.yaml'))).toBe(true);
  });

  test('processCriticalActions: with strict, a missing critical file halts with the spec message and ENOENT', async () => {
    const error = await failure(['Load into memory {bundle-root}/missing.yaml and set variables: a']);
    expect(error.message).toMatch(/^Critical action failed: Load into memory \{bundle-root\}\/missing\.yaml and set variables: a\nError: ENOENT: no such file or directory/);
    expect(error.name).toBe('CriticalActionError');
    expect(error.instruction).toBe('Load into memory {bundle-root}/missing.yaml and set variables: a');
  });

  test('processCriticalActions: a critical file outside the roots is a security violation', async () => {
    const error = await failure(['Load into memory {bundle-root}/../../../../../../etc/passwd']);
    // The spec's two lines, then the agent file the action belongs to.
    expect(error.message).toBe(
      'Critical action failed: Load into memory {bundle-root}/../../../../../../etc/passwd\nError: Security violation: Access denied' + `\nFile: ${path.join(tmp, 'b/agents/alex.md')}`,
    );
    expect(error.cause).toBeInstanceOf(SecurityViolationError);
  });

  test('processCriticalActions: with strict, an unknown variable in a load path fails; a broken config always fails', async () => {
    expect((await failure(['Load into memory {nowhere}/config.yaml'])).message).toContain('Error: Config variable not found: nowhere');
    const broken = await run(['Load into memory {bundle-root}/bad/config.yaml'], { 'bad/config.yaml': 'a: [unclosed\n' }).catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(CriticalActionError);
    expect((broken as Error).message).toMatch(/^Critical action failed: Load into memory \{bundle-root\}\/bad\/config\.yaml\nError: /);
  });

  test('processCriticalActions: non-load instructions keep unknown variables as written', async () => {
    const { result } = await run(['Use {mystery} wisely', 'Load persona from this current agent file (already in context)']);
    expect(result.messages).toEqual([
      { role: 'system', content: '[Critical Instruction] Use {mystery} wisely' },
      { role: 'system', content: '[Critical Instruction] Load persona from this current agent file (already in context)' },
    ]);
  });

  test('fileLoadTargets: recognises load lines and their files, not guidance or variable lists', () => {
    expect(fileLoadTargets('Load into memory {bundle-root}/config.yaml and set variables: project_name, output_folder')).toEqual(['{bundle-root}/config.yaml']);
    expect(fileLoadTargets('🚨 IMMEDIATE ACTION REQUIRED:\n- Load and read {project-root}/bmad/bmm/config.yaml NOW\n- Store ALL fields as session variables: {user_name}, {output_folder}')).toEqual([
      '{project-root}/bmad/bmm/config.yaml',
    ]);
    expect(fileLoadTargets('Load {bundle-root}/workflows/intake.yaml')).toEqual(['{bundle-root}/workflows/intake.yaml']);
    expect(fileLoadTargets('Load into memory {a}/x.yaml and {b}/y.md.')).toEqual(['{a}/x.yaml', '{b}/y.md']);
    expect(fileLoadTargets('Load into memory config.yaml')).toEqual(['config.yaml']);
    expect(fileLoadTargets('Load the referenced fragment(s) from `{project-root}/bmad/bmm/testarch/knowledge/` before giving recommendations')).toEqual([]);
    expect(fileLoadTargets('Consult {project-root}/bmad/bmm/testarch/tea-index.csv and load only the files needed')).toEqual([]);
    expect(fileLoadTargets('Load persona from this current agent file (already in context)')).toEqual([]);
    expect(fileLoadTargets('When a story is loaded, READ the entire story markdown')).toEqual([]);
    expect(fileLoadTargets("Remember the user's name is {user_name}")).toEqual([]);
  });
});
