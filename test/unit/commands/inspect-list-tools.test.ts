/**
 * `loopwright inspect --list-tools`: the tools a session would be offered, listed by the same code
 * as a session's `listTools`: built-in, custom from `--tool-module`, and the tools of the project's
 * MCP servers (a real server from npm, started and stopped again), after the agent's allow-list.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cli } from './cli-capture';

jest.setTimeout(60_000);

const REPO = path.resolve(__dirname, '../../..');
let dir: string;
let bundle: string;
let toolModule: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-inspect-tools-'));
  bundle = path.join(dir, 'bundle');
  fs.cpSync(path.join(REPO, 'bundles', 'requirements-facilitator'), bundle, { recursive: true });
  const everything = path.join(REPO, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  fs.writeFileSync(path.join(bundle, '.mcp.json'), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } }));
  toolModule = path.join(dir, 'tools.js');
  fs.writeFileSync(
    toolModule,
    [
      `const { z } = require(${JSON.stringify(require.resolve('zod'))});`,
      `const { defineTool } = require(${JSON.stringify(path.join(REPO, 'activities/tools/custom-tool.ts'))});`,
      `exports.greet = defineTool({ name: 'greet', description: 'Greets', parameters: z.object({ who: z.string() }), access: 'read', run: ({ who }) => 'hi ' + who });`,
    ].join('\n'),
  );
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('lists built-in, custom and MCP tools with what each needs, as a session would be offered them', async () => {
  const { code, stdout } = await cli(['inspect', bundle, '--list-tools', '--tool-module', toolModule]);
  expect(code).toBe(0);
  const listing = stdout.slice(stdout.indexOf('Tools a session would be offered'));
  expect(listing).toMatch(/^\s+read_file\s+builtin\s+read$/m);
  expect(listing).toMatch(/^\s+save_output\s+builtin\s+write$/m);
  expect(listing).toMatch(/^\s+greet\s+custom\s+read$/m);
  expect(listing).toMatch(/^\s+everything__echo\s+mcp everything\s+read$/m);
  expect(listing).toMatch(/^\s+everything__toggle-simulated-logging\s+mcp everything\s+write\s+needs approval$/m);
});

test("--json carries the listing; the agent's allow-list in bundle.yaml narrows it", async () => {
  const manifest = path.join(bundle, 'bundle.yaml');
  const original = fs.readFileSync(manifest, 'utf8');
  fs.writeFileSync(manifest, original.replace('entry_point: true', 'entry_point: true\n    tools: [read_file, "everything__get-*"]'));
  try {
    const { code, stdout } = await cli(['inspect', bundle, '--list-tools', '--json']);
    expect(code).toBe(0);
    const listed = (JSON.parse(stdout) as { listedTools: { tools: { function: { name: string } }[] } }).listedTools;
    const names = listed.tools.map((t) => t.function.name);
    expect(names[0]).toBe('read_file');
    expect(names.length).toBeGreaterThan(2);
    expect(names.every((n) => n === 'read_file' || n.startsWith('everything__get-'))).toBe(true);
  } finally {
    fs.writeFileSync(manifest, original);
  }
});

test('a tool module that exports no tool is a clear error naming it', async () => {
  const empty = path.join(dir, 'empty.js');
  fs.writeFileSync(empty, 'exports.nothing = 1;');
  const { code, stderr } = await cli(['inspect', bundle, '--tool-module', empty]);
  expect(code).toBe(1);
  expect(stderr).toContain(`Tool module ${empty} exports no tool made by defineTool`);
});
