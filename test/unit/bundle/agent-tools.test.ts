/**
 * An agent's tool allow-list (`tools:` in bundle.yaml): validated with the manifest (errors name the
 * file, the field and the value), found by `agentToolAllowList` as a session finds its agent, and
 * matched by the allow-list rule (an exact name, or `*` for any run of characters).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { agentToolAllowList, offeredBuiltinTools, unmatchedAllowListEntries } from '../../../bundle/agent-tools';
import { loadBundle } from '../../../bundle/bundle-loader';
import { parseManifest } from '../../../bundle/bundle-manifest';
import { AgentNotFoundError, BundleLoadError } from '../../../bundle/errors';
import { allowedByPatterns, matchesToolPattern } from '../../../common/tool-patterns';
import { makeBundle, makeInstalledTree, makeTempDir, sourceAgent, writeTree } from './fixtures';

let tmp: string;
beforeEach(async () => {
  tmp = await makeTempDir();
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const TWO_AGENTS = `name: demo
agents:
  - id: facilitator
    file: agents/alex.md
    entry_point: true
    tools: [read_file, "github__*"]
  - id: writer
    file: agents/writer.md
`;

async function twoAgentBundle(manifest = TWO_AGENTS): Promise<string> {
  const root = await makeBundle(path.join(tmp, 'b'), { manifest });
  await writeTree(root, { 'agents/writer.md': sourceAgent().replace('id="requirements-workflow/agents/alex.md"', 'id="demo/agents/writer.md"') });
  return root;
}

describe('bundle.yaml tools:', () => {
  test('a list of names and patterns is kept; the loader gives it to the agent', async () => {
    const root = await twoAgentBundle();
    const bundle = await loadBundle(root);
    expect(bundle.agents.map((a) => [a.id, a.tools])).toEqual([
      ['facilitator', ['read_file', 'github__*']],
      ['writer', undefined],
    ]);
  });

  test.each([
    ['tools: [read_file, "read file"]', 'agents.0.tools.1', /a tool name or pattern takes letters, digits, _, - and \*.*, got "read file"/],
    ['tools: [read_file, "gh.tools"]', 'agents.0.tools.1', /got "gh\.tools"/],
    ['tools: [""]', 'agents.0.tools.0', /got ""/],
    ['tools: read_file', 'agents.0.tools', /expected array/],
    ['tools: [3]', 'agents.0.tools.0', /expected string/],
  ])('%s: refused, naming the file, the field and the value', (line, field, message) => {
    const file = '/b/bundle.yaml';
    const text = `agents:\n  - id: x\n    file: agents/x.md\n    ${line}\n`;
    let error: unknown;
    try {
      parseManifest(text, file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BundleLoadError);
    expect(error).toMatchObject({ file, field });
    expect((error as Error).message).toMatch(new RegExp(`^Invalid bundle manifest /b/bundle\\.yaml: ${field.replace(/\./g, '\\.')}: `));
    expect((error as Error).message).toMatch(message);
  });
});

describe('agentToolAllowList', () => {
  test('the agent is found as a session finds it: id, file name, path, <agent id>, or the entry point', async () => {
    const root = await twoAgentBundle();
    for (const id of ['facilitator', 'FACILITATOR', 'alex', 'agents/alex.md', 'requirements-workflow/agents/alex.md', '']) {
      await expect(agentToolAllowList(root, id)).resolves.toEqual(['read_file', 'github__*']);
    }
    await expect(agentToolAllowList(root, 'writer')).resolves.toBeUndefined();
    await expect(agentToolAllowList(root, 'demo/agents/writer.md')).resolves.toBeUndefined();
  });

  test('returns a copy: changing it changes nothing the next caller gets', async () => {
    const root = await twoAgentBundle();
    const list = (await agentToolAllowList(root, 'facilitator'))!;
    list.push('save_output');
    await expect(agentToolAllowList(root, 'facilitator')).resolves.toEqual(['read_file', 'github__*']);
  });

  test('an empty list is an allow-list that lets no tool through, not "no list"', async () => {
    const root = await twoAgentBundle(TWO_AGENTS.replace('tools: [read_file, "github__*"]', 'tools: []'));
    await expect(agentToolAllowList(root, 'facilitator')).resolves.toEqual([]);
  });

  test('a bundle without bundle.yaml and an installed BMAD tree have none', async () => {
    const plain = await makeBundle(path.join(tmp, 'plain'));
    await expect(agentToolAllowList(plain, 'alex')).resolves.toBeUndefined();
    const project = await makeInstalledTree(path.join(tmp, 'proj'));
    // A bundle.yaml at the top of an installed project is not a manifest: the tree wins, as in the loader.
    await writeTree(project, { 'bundle.yaml': TWO_AGENTS });
    await expect(agentToolAllowList(project, 'bmm/pm')).resolves.toBeUndefined();
    await expect(agentToolAllowList(path.join(project, 'bmad'), 'pm')).resolves.toBeUndefined();
    await expect(agentToolAllowList(path.join(project, 'bmad/bmm'), 'pm')).resolves.toBeUndefined();
  });

  test("an unknown agent, a bad manifest and a missing folder fail with the loader's errors", async () => {
    const root = await twoAgentBundle();
    await expect(agentToolAllowList(root, 'nobody')).rejects.toThrow(AgentNotFoundError);
    await expect(agentToolAllowList(root, 'nobody')).rejects.toThrow('Available agents: facilitator, writer');
    await fs.writeFile(path.join(root, 'bundle.yaml'), 'agents:\n  - id: x\n    file: agents/alex.md\n    tools: ["a b"]\n');
    await expect(agentToolAllowList(root, 'x')).rejects.toMatchObject({ name: 'BundleLoadError', field: 'agents.0.tools.0' });
    await expect(agentToolAllowList(path.join(tmp, 'missing'), 'x')).rejects.toThrow(/^Bundle not found: /);
  });
});

describe('the allow-list rule', () => {
  test.each([
    ['read_file', 'read_file', true],
    ['read_file', 'read_files', false],
    ['read_file', 'xread_file', false],
    ['*', 'anything', true],
    ['*', '', true],
    ['github__*', 'github__create_issue', true],
    ['github__*', 'github__', true],
    ['github__*', 'gitlab__create_issue', false],
    ['*_file', 'read_file', true],
    ['*_file', 'read_file_now', false],
    ['read*file', 'read_file', true],
    ['read*file', 'readfile', true],
    ['*__get_*', 'github__get_issue', true],
    ['*__get_*', 'github__list_issues', false],
    ['a*a*a*b', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac', false],
    ['a*a*a*b', 'aaab', true],
    ['**x', 'x', true],
    ['Read_File', 'read_file', false],
  ])('%s matches %s: %s', (pattern, name, expected) => {
    expect(matchesToolPattern(pattern, name)).toBe(expected);
  });

  test('allowedByPatterns: any entry matching lets the tool through; an empty list lets none', () => {
    expect(allowedByPatterns(['save_output', 'read_*'], 'read_file')).toBe(true);
    expect(allowedByPatterns(['save_output', 'read_*'], 'execute_workflow')).toBe(false);
    expect(allowedByPatterns([], 'read_file')).toBe(false);
  });

  test('offeredBuiltinTools: the activity tools the list lets through, in order, and the loop-breaking tools always', () => {
    const all = offeredBuiltinTools(undefined).map((t) => t.name);
    expect(all).toEqual(['read_file', 'execute_workflow', 'save_output', 'edit_file', 'ask_question', 'task_completion']);
    expect(offeredBuiltinTools(['save_output', 'read_file'])).toEqual([
      { name: 'read_file', kind: 'builtin', access: 'read' },
      { name: 'save_output', kind: 'builtin', access: 'write' },
      { name: 'ask_question', kind: 'loop' },
      { name: 'task_completion', kind: 'loop' },
    ]);
    expect(offeredBuiltinTools([]).map((t) => t.kind)).toEqual(['loop', 'loop']);
  });

  test('unmatchedAllowListEntries: no built-in match and no "__"; built-in names, patterns and MCP names pass', () => {
    expect(unmatchedAllowListEntries(['read_file', 'reed_file', '*_output', 'github__*', 'ask_question', 'slack', 'web*'])).toEqual(['reed_file', 'slack', 'web*']);
  });
});
