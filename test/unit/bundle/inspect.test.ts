/**
 * `inspect` never refuses an agent that parses: a broken agent is shown with its commands and
 * prompt, and every problem met (missing files, refusals, variables that do not resolve) is listed
 * as a warning, in the text report and in --json.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { inspectBundle } from '../../../bundle/inspect';
import { formatInspection, inspectCommand } from '../../../cli/commands/inspect';
import { makeBundle, makeTempDir, sourceAgent, writeTree } from './fixtures';

let tmp: string;
beforeEach(async () => {
  tmp = await makeTempDir();
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

function capture() {
  const logs: string[] = [];
  const errors: string[] = [];
  return { out: { log: (s: string) => logs.push(s), error: (s: string) => errors.push(s) }, logs, errors };
}

/** A bundle whose agent refuses to start: a path outside the roots, a missing file, unknown variables, a missing workflow. */
async function brokenBundle(): Promise<string> {
  const root = await makeBundle(path.join(tmp, 'b'), {
    agent: sourceAgent([
      'Load into memory {bundle-root}/config.yaml and set variables: user_name',
      'Load COMPLETE file {bundle-root}/../../../../etc/hostname',
      'Load COMPLETE file {notes_file}',
      'Remember {user_nick}',
    ]),
    config: "user_name: Bryan\nnotes_file: '{bundle-root}/data/gone.md'\n",
  });
  await fs.rm(path.join(root, 'workflows'), { recursive: true });
  return root;
}

describe('inspect on a broken agent', () => {
  test('inspectBundle: shows the agent, commands and prompt, and lists every problem instead of failing', async () => {
    const root = await brokenBundle();
    const data = await inspectBundle(root, 'alex');
    expect(data.agent.name).toBe('Alex');
    expect(data.commands.map((c) => c.cmd)).toEqual(['*help', '*intake-workflow', '*exit']);
    expect(data.systemPrompt.startsWith('You are Alex, Requirements Facilitator.')).toBe(true);
    expect(data.sessionWouldStart).toBe(false);
    expect(data.warnings).toEqual([
      'Critical action: could not load {bundle-root}/../../../../etc/hostname (Security violation: Access denied); a session stops here',
      `Critical action: could not load ${path.join(root, 'data/gone.md')} (not found)`,
      'Critical instruction: variable {user_nick} does not resolve in "Remember {user_nick}"',
      `Command *intake-workflow: workflow file not found: {bundle-root}/workflows/intake-workflow/workflow.yaml (${path.join(root, 'workflows/intake-workflow/workflow.yaml')})`,
    ]);
    expect(data.messages.map((m) => m.content.split('\n')[0]).slice(1)).toEqual([
      `[Critical Action] Loaded file: ${path.join(root, 'config.yaml')}`,
      '[Critical Action] Could not load file: {bundle-root}/../../../../etc/hostname (Security violation: Access denied)',
      `[Critical Action] Could not load file: ${path.join(root, 'data/gone.md')} (not found)`,
      '[Critical Instruction] Remember {user_nick}',
    ]);
  });

  test('inspect command: text and --json show the warnings and exit 0', async () => {
    const root = await brokenBundle();
    const text = capture();
    await expect(inspectCommand(root, 'alex', {}, text.out)).resolves.toBe(0);
    const report = text.logs.join('\n');
    expect(report).toContain('Agent: 🧭 Alex, Requirements Facilitator');
    expect(report).toContain('Warnings (4):');
    expect(report).toContain(`  ! Critical action: could not load ${path.join(root, 'data/gone.md')} (not found)`);
    expect(report).toContain('A session with this agent would stop at initialisation');
    expect(report).toContain('----- [1] system: system prompt');
    expect(text.errors).toEqual([]);

    const json = capture();
    await expect(inspectCommand(root, 'alex', { json: true }, json.out)).resolves.toBe(0);
    const data = JSON.parse(json.logs.join('\n'));
    expect(data.warnings).toHaveLength(4);
    expect(data.warnings[1]).toBe(`Critical action: could not load ${path.join(root, 'data/gone.md')} (not found)`);
    expect(data.sessionWouldStart).toBe(false);
  });

  test('an output folder outside the project is a warning, with no write roots, not a refusal', async () => {
    const root = await makeBundle(path.join(tmp, 'b'), { config: "user_name: Bryan\ncommunication_language: English\noutput_folder: '/'\n" });
    const data = await inspectBundle(root, 'alex');
    expect(data.context.writeRoots).toEqual([]);
    expect(data.warnings).toEqual([expect.stringMatching(/^Write roots: The output_folder \/ .*outside the project root.*; a session stops here$/)]);
    expect(formatInspection(data)).toContain('write roots: (none)');
  });

  test('an agent with a missing file only: the session would start, the warning is shown', async () => {
    const root = await makeBundle(path.join(tmp, 'b'), {
      agent: sourceAgent(['Load into memory {bundle-root}/config.yaml and set variables: user_name', 'Read {bundle-root}/data/notes.md']),
    });
    const data = await inspectBundle(root, 'alex');
    expect(data.sessionWouldStart).toBe(true);
    expect(data.warnings).toEqual([`Critical action: could not load ${path.join(root, 'data/notes.md')} (not found)`]);
    expect(formatInspection(data)).not.toContain('would stop');
  });

  test('an agent that does not parse is still refused with its error and exit 1', async () => {
    const root = await makeBundle(path.join(tmp, 'b'));
    await writeTree(root, { 'agents/broken.md': '<agent name="B" title="T">\n<persona>\n' });
    const { out, errors } = capture();
    await expect(inspectCommand(root, 'broken', {}, out)).resolves.toBe(1);
    expect(errors.join('\n')).toMatch(/^Invalid agent file .*broken\.md: unclosed tag <persona> \(line 2\)$/);
  });
});
