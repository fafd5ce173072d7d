import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_MAX_READ_BYTES, initializeAgent } from '../../../bundle/initialize-agent';
import { AgentNotFoundError, AgentParseError, BundleError, CriticalActionError } from '../../../bundle/errors';
import { makeBundle, makeInstalledTree, makeTempDir, sourceAgent, writeTree } from './fixtures';

let tmp: string;
beforeEach(async () => {
  tmp = await makeTempDir();
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('initialize-agent', () => {
  test('initializeAgent: the spec flow gives the system prompt then the critical messages', async () => {
    const root = await makeBundle(path.join(tmp, 'b'));
    const { agent, messages, context } = await initializeAgent({ bundlePath: root, agentId: 'alex' });
    expect(agent.name).toBe('Alex');
    expect(messages.map((m) => m.role)).toEqual(['system', 'system', 'system', 'system']);
    expect(messages[0].content.startsWith('You are Alex, Requirements Facilitator.')).toBe(true);
    expect(messages[1].content.startsWith(`[Critical Action] Loaded file: ${path.join(root, 'config.yaml')}\n\nuser_name: Bryan`)).toBe(true);
    expect(messages[2].content).toBe("[Critical Instruction] Remember the user's name is Bryan");
    expect(messages[3].content).toBe('[Critical Instruction] ALWAYS communicate in English');
    expect(context).toEqual({
      bundleRoot: root,
      coreRoot: root,
      projectRoot: root,
      configPath: path.join(root, 'config.yaml'),
      variables: {
        'bundle-root': root,
        'core-root': root,
        'project-root': root,
        project_root: root,
        config_source: path.join(root, 'config.yaml'),
        user_name: 'Bryan',
        output_folder: path.join(root, 'docs'),
        communication_language: 'English',
      },
      readRoots: [root],
      writeRoots: [path.join(root, 'docs')],
      // The bundle's own files, which save_output never writes (see sandbox.test.ts).
      protectedPaths: expect.arrayContaining([path.join(root, 'agents'), path.join(root, 'workflows'), path.join(root, 'config.yaml'), path.join(root, 'bundle.yaml')]),
      maxReadBytes: DEFAULT_MAX_READ_BYTES,
    });
    expect(DEFAULT_MAX_READ_BYTES).toBe(1024 * 1024);
  });

  test('initializeAgent: the context is plain JSON (it is recorded in workflow history)', async () => {
    const root = await makeBundle(path.join(tmp, 'b'));
    const result = await initializeAgent({ bundlePath: root, agentId: 'alex' });
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  });

  test('initializeAgent: write roots come from outputRoots, else output_folder, else <project>/output', async () => {
    const root = await makeBundle(path.join(tmp, 'b'));
    const explicit = await initializeAgent({ bundlePath: root, agentId: 'alex', outputRoots: ['out', path.join(tmp, 'abs')] });
    expect(explicit.context.writeRoots).toEqual([path.join(root, 'out'), path.join(tmp, 'abs')]);

    const noFolder = await makeBundle(path.join(tmp, 'c'), { config: 'user_name: Bryan\ncommunication_language: English\n' });
    expect((await initializeAgent({ bundlePath: noFolder, agentId: 'alex' })).context.writeRoots).toEqual([path.join(noFolder, 'output')]);

    const unresolved = await makeBundle(path.join(tmp, 'd'), { config: 'user_name: B\ncommunication_language: E\noutput_folder: "{nowhere}/docs"\n' });
    expect((await initializeAgent({ bundlePath: unresolved, agentId: 'alex' })).context.writeRoots).toEqual([path.join(unresolved, 'output')]);
  });

  test('initializeAgent: an installed tree uses the module config and the tree roots', async () => {
    const project = await makeInstalledTree(path.join(tmp, 'proj'));
    const { messages, context } = await initializeAgent({ bundlePath: project, agentId: 'pm' });
    expect(context).toMatchObject({
      bundleRoot: path.join(project, 'bmad'),
      coreRoot: path.join(project, 'bmad/core'),
      projectRoot: project,
      configPath: path.join(project, 'bmad/bmm/config.yaml'),
      readRoots: [path.join(project, 'bmad'), path.join(project, 'bmad/core'), project],
      writeRoots: [path.join(project, 'docs')],
    });
    expect(context.variables.communication_language).toBe('French');
    expect(messages[0].content).toContain('RULES:');
    expect(messages.some((m) => m.content === "[Critical Instruction] Remember: user's name is BMad")).toBe(true);
  });

  test('initializeAgent: failures are typed bundle errors', async () => {
    const root = await makeBundle(path.join(tmp, 'b'));
    await expect(initializeAgent({ bundlePath: root, agentId: 'nobody' })).rejects.toThrow(AgentNotFoundError);

    await writeTree(root, { 'agents/broken.md': '<agent name="B" title="T">\n<persona>\n' });
    const parse = await initializeAgent({ bundlePath: root, agentId: 'broken' }).catch((e: unknown) => e);
    expect(parse).toBeInstanceOf(AgentParseError);
    expect((parse as Error).message).toBe(`Invalid agent file ${path.join(root, 'agents/broken.md')}: unclosed tag <persona> (line 2)`);

    await fs.rm(path.join(root, 'config.yaml'));
    // A missing file stops the agent only with strict (see critical-actions-loads.test.ts).
    const critical = await initializeAgent({ bundlePath: root, agentId: 'alex', strict: true }).catch((e: unknown) => e);
    expect(critical).toBeInstanceOf(CriticalActionError);
    expect(critical).toBeInstanceOf(BundleError);
    expect((critical as Error).message).toContain('ENOENT: no such file or directory');
  });

  test('initializeAgent: a critical file over maxReadBytes halts initialisation', async () => {
    const root = await makeBundle(path.join(tmp, 'b'), {
      agent: sourceAgent(['Load into memory {bundle-root}/config.yaml and set variables: user_name', 'Load COMPLETE file {bundle-root}/big.md']),
    });
    await writeTree(root, { 'big.md': 'x'.repeat(2000) });
    await expect(initializeAgent({ bundlePath: root, agentId: 'alex', maxReadBytes: 1000 })).rejects.toThrow(
      `Critical action failed: Load COMPLETE file {bundle-root}/big.md\nError: File too large: ${path.join(root, 'big.md')} is 2000 bytes; the read limit is 1000 bytes`,
    );
    const ok = await initializeAgent({ bundlePath: root, agentId: 'alex', maxReadBytes: 5000 });
    expect(ok.context.maxReadBytes).toBe(5000);
  });

  test('initializeAgent: {date} in critical instructions uses the given date', async () => {
    const root = await makeBundle(path.join(tmp, 'b'), { agent: sourceAgent(['Today is {date}']) });
    const { messages } = await initializeAgent({ bundlePath: root, agentId: 'alex', date: '2025-10-05' });
    expect(messages[1].content).toBe('[Critical Instruction] Today is 2025-10-05');
  });
});
