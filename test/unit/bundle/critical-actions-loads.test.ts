/**
 * Real BMAD agents as their authors wrote them: what a critical action loads is decided from the
 * resolved value of its tokens (a single `{variable}` whose value is a file path is loaded), "Read"
 * phrasings that name a file load it, a missing file is a warning unless `strict`, and a path
 * outside the roots is still a refusal that stops the agent.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseAgent } from '../../../bundle/agent-parser';
import { loadBundle } from '../../../bundle/bundle-loader';
import { fileLoadTargets, isFilePathValue, processCriticalActions } from '../../../bundle/critical-actions';
import { CriticalActionError, SecurityViolationError } from '../../../bundle/errors';
import { initializeAgent } from '../../../bundle/initialize-agent';
import { validateBundle } from '../../../bundle/validate';
import { pathVariables } from '../../../bundle/variables';
import { makeBundle, makeTempDir, sourceAgent, writeTree } from './fixtures';

let tmp: string;
beforeEach(async () => {
  tmp = await makeTempDir();
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const CONFIG_LOAD = 'Load into memory {bundle-root}/config.yaml and set variables: user_name';

/** A bundle whose agent has `actions`, whose config.yaml is `config`, plus `extra` files. */
async function bundleWith(actions: string[], config = 'user_name: Bryan\n', extra: Record<string, string> = {}): Promise<string> {
  const root = await makeBundle(path.join(tmp, 'b'), { agent: sourceAgent(actions), config });
  await writeTree(root, extra);
  return root;
}

const firstLines = (messages: { content: string }[]) => messages.map((m) => m.content.split('\n')[0]);

describe('critical actions: load targets decided from resolved values', () => {
  test('a single variable whose config value is a path is loaded (Load COMPLETE file {notes_file})', async () => {
    const root = await bundleWith([CONFIG_LOAD, 'Load COMPLETE file {notes_file} into permanent memory', 'Remember {user_name}'], "user_name: Bryan\nnotes_file: '{bundle-root}/data/notes.md'\n", {
      'data/notes.md': 'Always cite sources.\n',
    });
    const notes = path.join(root, 'data/notes.md');
    const { messages, warnings, context } = await initializeAgent({ bundlePath: root, agentId: 'alex' });
    expect(messages).toContainEqual({ role: 'system', content: `[Critical Action] Loaded file: ${notes}\n\nAlways cite sources.\n` });
    expect(firstLines(messages.slice(1))).toEqual([
      `[Critical Action] Loaded file: ${path.join(root, 'config.yaml')}`,
      `[Critical Action] Loaded file: ${notes}`,
      '[Critical Instruction] Remember Bryan',
    ]);
    expect(warnings).toEqual([]);
    expect(context.variables.notes_file).toBe(notes);
  });

  test('a single variable whose value is not a file stays an instruction; one that does not resolve on a Load line is reported', async () => {
    const root = await bundleWith(
      [CONFIG_LOAD, 'Load {user_name} preferences from memory', 'Load {output_folder} listing', 'Load COMPLETE file {nowhere_file}'],
      "user_name: Bryan\noutput_folder: '{project-root}/docs'\n",
    );
    const { messages, warnings } = await initializeAgent({ bundlePath: root, agentId: 'alex' });
    expect(firstLines(messages.slice(2))).toEqual([
      '[Critical Instruction] Load Bryan preferences from memory',
      `[Critical Instruction] Load ${path.join(root, 'docs')} listing`,
      '[Critical Action] Could not load file: {nowhere_file} (variable {nowhere_file} does not resolve)',
    ]);
    expect(warnings).toEqual(['Critical action: could not load {nowhere_file} (variable {nowhere_file} does not resolve)']);
    await expect(initializeAgent({ bundlePath: root, agentId: 'alex', strict: true })).rejects.toThrow('Config variable not found: nowhere_file');
  });

  test('fileLoadTargets: single variables count only with the variables, by their value', () => {
    const vars = { notes_file: '/b/data/notes.md', rel: 'data/team.yaml', name: 'Bryan', folder: '/b/docs', version: '6.0.0' };
    expect(fileLoadTargets('Load COMPLETE file {notes_file}')).toEqual([]);
    expect(fileLoadTargets('Load COMPLETE file {notes_file}', vars)).toEqual(['{notes_file}']);
    expect(fileLoadTargets('- Load and read {rel} NOW', vars)).toEqual(['{rel}']);
    expect(fileLoadTargets('Load {name} and {folder} and {version}', vars)).toEqual([]);
    expect(fileLoadTargets('Load {missing}', vars)).toEqual(['{missing}']);
    expect(fileLoadTargets('Read {missing}', vars)).toEqual([]);
    expect(fileLoadTargets('Remember {notes_file}', vars)).toEqual([]);
    expect(isFilePathValue('/p/My Projects/notes.md')).toBe(true);
    expect(isFilePathValue('notes.md')).toBe(true);
    expect(isFilePathValue('a note.md')).toBe(false);
    expect(isFilePathValue('https://example.com/x.md')).toBe(false);
    expect(isFilePathValue('/p/docs/')).toBe(false);
    expect(isFilePathValue('bob@example.com')).toBe(false);
  });
});

describe('critical actions: the phrasings of the corpus, and "Read"', () => {
  test('"Read" loads a named file; a "Read" sentence that is an instruction stays a [Critical Instruction]', async () => {
    const root = await bundleWith(
      [
        CONFIG_LOAD,
        'Read COMPLETE file {bundle-root}/data/rules.md and follow ALL rules within',
        "Read the user's request carefully",
        'CRITICAL: Read {rules_file} into memory',
        '- Read and load `data/glossary.md`',
        'Read each file to understand its actual purpose',
        'Read the user request, then check {bundle-root}/data/other.md',
      ],
      "user_name: Bryan\nrules_file: '{bundle-root}/data/more.md'\n",
      { 'data/rules.md': 'rule 1\n', 'data/more.md': 'rule 2\n', 'data/glossary.md': 'terms\n', 'data/other.md': 'never loaded\n' },
    );
    const { messages, warnings } = await initializeAgent({ bundlePath: root, agentId: 'alex' });
    expect(firstLines(messages.slice(2))).toEqual([
      `[Critical Action] Loaded file: ${path.join(root, 'data/rules.md')}`,
      "[Critical Instruction] Read the user's request carefully",
      `[Critical Action] Loaded file: ${path.join(root, 'data/more.md')}`,
      `[Critical Action] Loaded file: ${path.join(root, 'data/glossary.md')}`,
      '[Critical Instruction] Read each file to understand its actual purpose',
      `[Critical Instruction] Read the user request, then check ${path.join(root, 'data/other.md')}`,
    ]);
    expect(warnings).toEqual([]);
  });

  test('fileLoadTargets: every load phrasing of the corpus, with labels, list markers and emoji, and the "Read" ones', () => {
    const cases: [string, string[]][] = [
      ['Load into memory {project-root}/bmad/bmm/config.yaml and set variable project_name, output_folder, user_name', ['{project-root}/bmad/bmm/config.yaml']],
      ['Load into memory {project-root}/bmad/bmm/config.yaml and set variables', ['{project-root}/bmad/bmm/config.yaml']],
      [
        '🚨 IMMEDIATE ACTION REQUIRED - BEFORE ANY OUTPUT:\n- Load and read {project-root}/bmad/bmb/config.yaml NOW\n- Store ALL fields as session variables: {user_name}',
        ['{project-root}/bmad/bmb/config.yaml'],
      ],
      ['CRITICAL: Load COMPLETE file {project-root}/src/x/documentation-standards.md into permanent memory and follow ALL rules within', ['{project-root}/src/x/documentation-standards.md']],
      ['Load COMPLETE file {project-root}/bmad/bmm/config.yaml', ['{project-root}/bmad/bmm/config.yaml']],
      ['Load config from {project-root}/bmad/{module}/config.yaml', ['{project-root}/bmad/{module}/config.yaml']],
      ['Load {project-root}/bmad/bmm/testarch/tea-knowledge.md into context', ['{project-root}/bmad/bmm/testarch/tea-knowledge.md']],
      ['1. **Load** {project-root}/a.md', ['{project-root}/a.md']],
      ['Read COMPLETE file {project-root}/a.md into permanent memory', ['{project-root}/a.md']],
      ['IMPORTANT: Read the entire file {project-root}/a.md', ['{project-root}/a.md']],
      ['- 📖 Read **COMPLETE** file: `{project-root}/a.md` and {project-root}/b.md', ['{project-root}/a.md', '{project-root}/b.md']],
      ['Read and load data/notes.md, data/more.md', ['data/notes.md', 'data/more.md']],
      ['Read into memory {project-root}/bmad/core/config.yaml and set variables: user_name', ['{project-root}/bmad/core/config.yaml']],
      ['Read this entire XML node - this is your complete persona and operating procedure', []],
      ['1:Read this entire XML node - this is your complete persona', []],
      ["Read the user's request carefully", []],
      ["Read file contents to generate accurate descriptions - don't guess from filenames", []],
      ['Read the rules, then follow {project-root}/a.md', []],
      ['When a story is loaded, READ the entire story markdown', []],
      ["Locate 'Dev Agent Record' and READ the referenced Story Context file(s)", []],
      ['Reading {project-root}/a.md is optional', []],
      ['Load persona from this current agent file (already in context)', []],
      ['Load the referenced fragment(s) from `{project-root}/bmad/bmm/testarch/knowledge/` before giving recommendations', []],
    ];
    for (const [instruction, expected] of cases) expect({ instruction, targets: fileLoadTargets(instruction, {}) }).toEqual({ instruction, targets: expected });
  });
});

describe('critical actions: missing files, strict, refusals', () => {
  test('a missing file: the session starts, the model gets a message in its place, initialisation returns the warning; strict fails', async () => {
    const root = await bundleWith([CONFIG_LOAD, 'Load COMPLETE file {bundle-root}/data/gone.md into permanent memory', 'Remember {user_name}']);
    const gone = path.join(root, 'data/gone.md');
    const { messages, warnings } = await initializeAgent({ bundlePath: root, agentId: 'alex' });
    expect(firstLines(messages.slice(1))).toEqual([
      `[Critical Action] Loaded file: ${path.join(root, 'config.yaml')}`,
      `[Critical Action] Could not load file: ${gone} (not found)`,
      '[Critical Instruction] Remember Bryan',
    ]);
    expect(warnings).toEqual([`Critical action: could not load ${gone} (not found)`]);

    const error = await initializeAgent({ bundlePath: root, agentId: 'alex', strict: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CriticalActionError);
    expect((error as Error).message).toMatch(/^Critical action failed: Load COMPLETE file \{bundle-root\}\/data\/gone\.md[^\n]*\nError: ENOENT: no such file or directory/);
  });

  test('a missing config: the agent still starts, its variables stay as written', async () => {
    const root = await bundleWith([CONFIG_LOAD, 'Remember {user_name}']);
    await fs.rm(path.join(root, 'config.yaml'));
    const { messages, warnings, context } = await initializeAgent({ bundlePath: root, agentId: 'alex' });
    expect(warnings).toEqual([`Critical action: could not load ${path.join(root, 'config.yaml')} (not found)`]);
    expect(messages[2].content).toBe('[Critical Instruction] Remember {user_name}');
    expect(context.writeRoots).toEqual([path.join(root, 'output')]);
  });

  test('validate still lists a missing file as a problem', async () => {
    const root = await bundleWith([CONFIG_LOAD, 'Load COMPLETE file {notes_file}'], "user_name: Bryan\nnotes_file: '{bundle-root}/data/gone.md'\n");
    const problems = await validateBundle(root);
    expect(problems).toContainEqual({
      file: 'agents/alex.md',
      field: 'critical-actions',
      message: expect.stringMatching(/^Critical action failed: Load COMPLETE file \{notes_file\}\nError: ENOENT: no such file or directory/),
    });
  });

  test("a path outside the roots is still refused and stops the agent, spelled out or as a single variable's value", async () => {
    const outside = path.join(tmp, 'outside.md');
    await fs.writeFile(outside, 'secret plans\n');
    for (const [actions, config] of [
      [[CONFIG_LOAD, 'Load COMPLETE file {bundle-root}/../outside.md'], 'user_name: Bryan\n'],
      [[CONFIG_LOAD, 'Load COMPLETE file {notes_file}'], `user_name: Bryan\nnotes_file: '${outside}'\n`],
      [[CONFIG_LOAD, 'Read {notes_file}'], "user_name: Bryan\nnotes_file: '{bundle-root}/../outside.md'\n"],
    ] as const) {
      await fs.rm(path.join(tmp, 'b'), { recursive: true, force: true });
      const root = await bundleWith([...actions], config);
      const error = await initializeAgent({ bundlePath: root, agentId: 'alex' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CriticalActionError);
      expect((error as Error).cause).toBeInstanceOf(SecurityViolationError);
      expect((error as Error).message).toContain('Error: Security violation: Access denied');
      expect((error as Error).message).not.toContain('secret plans');
    }
  });

  test('allowSecretFiles reaches the critical action: a secret file is refused by default and loaded when the user allows it', async () => {
    const root = await bundleWith([CONFIG_LOAD, 'Load COMPLETE file {project-root}/.env.example'], 'user_name: Bryan\n', { '.env.example': 'API_URL=x\n' });
    await expect(initializeAgent({ bundlePath: root, agentId: 'alex' })).rejects.toThrow(/Secret file refused/);
    const { messages } = await initializeAgent({ bundlePath: root, agentId: 'alex', allowSecretFiles: true });
    expect(messages).toContainEqual({ role: 'system', content: `[Critical Action] Loaded file: ${path.join(root, '.env.example')}\n\nAPI_URL=x\n` });
  });

  test('a FIFO named by a critical action is refused at once instead of hanging', async () => {
    const root = await bundleWith([CONFIG_LOAD, 'Load COMPLETE file {bundle-root}/data/pipe.md']);
    await fs.mkdir(path.join(root, 'data'), { recursive: true });
    execFileSync('mkfifo', [path.join(root, 'data/pipe.md')]);
    const bundle = await loadBundle(root);
    const agentFile = path.join(root, 'agents/alex.md');
    const agent = parseAgent(await fs.readFile(agentFile, 'utf8'), agentFile);
    const variables = pathVariables({ bundleRoot: bundle.bundleRoot, coreRoot: bundle.coreRoot, projectRoot: bundle.projectRoot });
    const started = Date.now();
    const error = await processCriticalActions(agent, { bundle, agentFile, variables, maxReadBytes: 1024 }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error).toBeInstanceOf(CriticalActionError);
    expect((error as Error).message).toContain(`Not a regular file: ${path.join(root, 'data/pipe.md')} is a FIFO`);
  }, 10_000);

  test('keepGoing (inspect) reports every problem instead of throwing, and says a session would stop', async () => {
    const root = await bundleWith([CONFIG_LOAD, 'Load COMPLETE file {bundle-root}/../../x.md', 'Load COMPLETE file {bundle-root}/gone.md']);
    const bundle = await loadBundle(root);
    const agentFile = path.join(root, 'agents/alex.md');
    const agent = parseAgent(await fs.readFile(agentFile, 'utf8'), agentFile);
    const variables = pathVariables({ bundleRoot: bundle.bundleRoot, coreRoot: bundle.coreRoot, projectRoot: bundle.projectRoot });
    const result = await processCriticalActions(agent, { bundle, agentFile, variables, keepGoing: true });
    expect(result.wouldStop).toBe(true);
    expect(result.warnings).toEqual([
      'Critical action: could not load {bundle-root}/../../x.md (Security violation: Access denied); a session stops here',
      `Critical action: could not load ${path.join(root, 'gone.md')} (not found)`,
    ]);
    expect(firstLines(result.messages)).toEqual([
      `[Critical Action] Loaded file: ${path.join(root, 'config.yaml')}`,
      '[Critical Action] Could not load file: {bundle-root}/../../x.md (Security violation: Access denied)',
      `[Critical Action] Could not load file: ${path.join(root, 'gone.md')} (not found)`,
    ]);
  });
});
