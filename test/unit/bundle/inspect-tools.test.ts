/**
 * What `inspect` and `validate` say about tools: the built-in tools an agent is offered (its
 * allow-list applied), the project's MCP servers (named, never connected to, no secret shown), a bad
 * `.mcp.json` as a warning of inspect and a problem of validate, and allow-list entries no tool can
 * match as warnings of validate that do not fail it.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { inspectBundle } from '../../../bundle/inspect';
import { checkBundle } from '../../../bundle/validate';
import { formatInspection, inspectCommand } from '../../../cli/commands/inspect';
import { formatReport, validateCommand } from '../../../cli/commands/validate';
import { makeBundle, makeTempDir, writeTree } from './fixtures';

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

const manifest = (tools: string) => `agents:\n  - id: alex\n    file: agents/alex.md\n    ${tools}\n`;

const MCP_JSON = JSON.stringify({
  mcpServers: {
    github: { url: 'https://api.example.com/mcp?key=SECRET-Q', headers: { Authorization: 'Bearer SECRET-H' } },
    files: { command: 'npx', args: ['server-filesystem', 'SECRET-A'], env: { TOKEN: 'SECRET-E' }, disabled: true },
  },
});

/** A stand-alone bundle (its own project root) with an allow-list and a `.mcp.json`. */
async function bundleWithTools(tools = 'tools: [read_file, "github__*"]', mcp: string | null = MCP_JSON): Promise<string> {
  const root = await makeBundle(path.join(tmp, 'b'), { manifest: manifest(tools) });
  if (mcp !== null) await writeTree(root, { '.mcp.json': mcp });
  return root;
}

describe('inspect', () => {
  test('the built-in tools the allow-list lets through, the allow-list, and the MCP servers of the project', async () => {
    const root = await bundleWithTools();
    const data = await inspectBundle(root, 'alex');
    expect(data.toolAllowList).toEqual(['read_file', 'github__*']);
    expect(data.tools).toEqual([
      { name: 'read_file', kind: 'builtin', access: 'read' },
      { name: 'ask_question', kind: 'loop' },
      { name: 'task_completion', kind: 'loop' },
    ]);
    expect(data.toolDefinitions.map((d) => d.function.name)).toEqual(['read_file', 'ask_question', 'task_completion']);
    expect(data.mcpServersFile).toBe(path.join(root, '.mcp.json'));
    expect(data.mcpServers).toEqual([
      { name: 'github', transport: 'http', url: 'https://api.example.com/mcp?key=***' },
      { name: 'files', transport: 'stdio', command: 'npx', disabled: true },
    ]);
    expect(data.warnings).toEqual([]);
  });

  test('text: the tools, the servers with their transport, where MCP tools are listed; no secret in text or --json', async () => {
    const root = await bundleWithTools();
    const text = capture();
    await expect(inspectCommand(root, 'alex', {}, text.out)).resolves.toBe(0);
    const report = text.logs.join('\n');
    expect(report).toContain("Built-in tools (3, by the agent's tools: read_file, github__*):\n  read_file        read\n  ask_question     ends the turn\n  task_completion  ends the turn\n");
    expect(report).not.toMatch(/^ {2}save_output/m);
    expect(report).toContain(`MCP servers (${path.join(root, '.mcp.json')}):\n  github  http   https://api.example.com/mcp?key=***\n  files   stdio  npx  (disabled)\n`);
    expect(report).toContain('Their tools are listed when a session starts: loopwright tools <session>.');
    const json = capture();
    await expect(inspectCommand(root, 'alex', { json: true }, json.out)).resolves.toBe(0);
    const data = JSON.parse(json.logs.join('\n'));
    expect(data.mcpServers.map((s: { name: string }) => s.name)).toEqual(['github', 'files']);
    expect(`${report}\n${json.logs.join('\n')}`).not.toMatch(/SECRET/);
  });

  test('without an allow-list or a .mcp.json: every built-in tool, no server', async () => {
    const root = await bundleWithTools('description: no list', null);
    const data = await inspectBundle(root, 'alex');
    expect(data).not.toHaveProperty('toolAllowList');
    expect(data.tools.map((t) => t.name)).toEqual(['read_file', 'execute_workflow', 'save_output', 'edit_file', 'ask_question', 'task_completion']);
    expect(data.mcpServers).toEqual([]);
    expect(data).not.toHaveProperty('mcpServersFile');
    const text = formatInspection(data);
    expect(text).toContain('Built-in tools (6):');
    expect(text).toContain('MCP servers (no .mcp.json in the project root):\n  (none)');
  });

  test('a bad .mcp.json is a warning naming the file and field; the agent is still shown and would start', async () => {
    const root = await bundleWithTools(undefined, '{"mcpServers": {"gh": {"args": []}, "ok": {"command": "srv"}}}');
    const data = await inspectBundle(root, 'alex');
    expect(data.warnings).toEqual([`MCP servers: ${path.join(root, '.mcp.json')} mcpServers.gh: needs "command" (a program to start) or "url" (a streamable HTTP server), as a non-empty string`]);
    expect(data.mcpServers).toEqual([{ name: 'ok', transport: 'stdio', command: 'srv' }]);
    expect(data.sessionWouldStart).toBe(true);
    const broken = await bundleWithTools(undefined, '{not json');
    expect((await inspectBundle(broken, 'alex')).warnings).toEqual([expect.stringMatching(new RegExp(`^MCP servers: ${path.join(root, '.mcp.json').replace(/[.]/g, '\\.')}: not valid JSON: `))]);
  });
});

describe('validate', () => {
  test('an allow-list entry no tool can match is a warning naming the manifest field; validation still passes', async () => {
    const root = await bundleWithTools('tools: [read_file, reed_file, "*_output", "github__*", "slack"]', null);
    const report = await checkBundle(root);
    expect(report.problems).toEqual([]);
    expect(report.warnings).toEqual([
      { file: 'bundle.yaml', field: 'agents.0.tools.1', message: expect.stringMatching(/^"reed_file" matches no built-in tool and has no "__"/) },
      { file: 'bundle.yaml', field: 'agents.0.tools.4', message: expect.stringMatching(/^"slack" matches no built-in tool/) },
    ]);
    expect(report.agents).toEqual([
      { id: 'alex', allowList: ['read_file', 'reed_file', '*_output', 'github__*', 'slack'], builtinTools: ['read_file', 'save_output', 'ask_question', 'task_completion'] },
    ]);

    const { out, logs } = capture();
    await expect(validateCommand(root, {}, out)).resolves.toBe(0);
    const text = logs.join('\n');
    expect(text).toContain('  bundle.yaml  agents.0.tools.1: warning: "reed_file" matches no built-in tool');
    expect(text).toMatch(/\n0 problem\(s\), 2 warning\(s\); 1 agent\(s\), \d+ command\(s\), \d+ workflow\(s\) checked$/);
  });

  test('a bad .mcp.json is a problem naming the file and field: exit 1; --json has it, the warnings and the tools per agent', async () => {
    const root = await bundleWithTools('tools: [save_output]', '{"mcpServers": {"gh": "https://example.com"}}');
    const { out, logs } = capture();
    await expect(validateCommand(root, { json: true }, out)).resolves.toBe(1);
    const data = JSON.parse(logs.join('\n'));
    expect(data.problems).toEqual([{ file: '.mcp.json', field: 'mcpServers.gh', message: `expected an object with "command" or "url", got a string (a session started in ${root} reads this file)` }]);
    expect(data.warnings).toEqual([]);
    expect(data.agents).toEqual([{ id: 'alex', allowList: ['save_output'], builtinTools: ['save_output', 'ask_question', 'task_completion'] }]);
    expect(data.type).toBe('BundleInvalid');
  });

  test('no allow-list: every built-in tool, no warning; the plain report is unchanged', async () => {
    const root = await bundleWithTools('description: none', null);
    const report = await checkBundle(root);
    expect(report.warnings).toEqual([]);
    expect(report.agents).toEqual([{ id: 'alex', builtinTools: ['read_file', 'execute_workflow', 'save_output', 'edit_file', 'ask_question', 'task_completion'] }]);
    expect(formatReport(root, report)).toMatch(/: no problems \(/);
  });

  test('an empty allow-list is a warning: only the loop-breaking tools are left', async () => {
    const root = await bundleWithTools('tools: []', null);
    const report = await checkBundle(root);
    expect(report.warnings).toEqual([{ file: 'bundle.yaml', field: 'agents.0.tools', message: expect.stringContaining('an empty list') }]);
    expect(report.agents[0]!.builtinTools).toEqual(['ask_question', 'task_completion']);
  });

  test('a bad allow-list entry is a manifest problem naming the field and value', async () => {
    const root = await bundleWithTools('tools: ["read file"]', null);
    const report = await checkBundle(root);
    expect(report.problems).toEqual([
      { file: path.join(root, 'bundle.yaml'), field: 'agents.0.tools.0', message: expect.stringMatching(/agents\.0\.tools\.0: a tool name or pattern takes .*, got "read file"$/) },
    ]);
  });
});
