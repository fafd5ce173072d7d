/**
 * The tolerant `.mcp.json` reader of inspect and validate: servers named with their transport and
 * command or URL, never an argument, environment value or header value; every problem named with
 * its field, the good servers kept.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readMcpServersFile, redactUrl } from '../../../bundle/mcp-servers-file';
import { makeTempDir } from './fixtures';

let tmp: string;
beforeEach(async () => {
  tmp = await makeTempDir();
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

async function withFile(content: string): Promise<Awaited<ReturnType<typeof readMcpServersFile>>> {
  await fs.writeFile(path.join(tmp, '.mcp.json'), content);
  return readMcpServersFile(tmp);
}

test('no .mcp.json: not found, no servers, no problem', async () => {
  expect(await readMcpServersFile(tmp)).toEqual({ file: path.join(tmp, '.mcp.json'), found: false, servers: [], problems: [] });
});

test('servers: stdio by command, http by URL, disabled ones marked; secrets are not shown', async () => {
  const result = await withFile(
    JSON.stringify({
      mcpServers: {
        fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '--token', 'sk-ARG-SECRET'], env: { API_KEY: 'sk-ENV-SECRET' } },
        github: { type: 'http', url: 'https://user:pw-SECRET@api.example.com/mcp?token=q-SECRET&v=${VERSION}', headers: { Authorization: 'Bearer h-SECRET' } },
        old: { command: 'old-server', disabled: true },
      },
      otherTool: { ignored: true },
    }),
  );
  expect(result.found).toBe(true);
  expect(result.problems).toEqual([]);
  expect(result.servers).toEqual([
    { name: 'fs', transport: 'stdio', command: 'npx' },
    { name: 'github', transport: 'http', url: 'https://***@api.example.com/mcp?token=***&v=${VERSION}' },
    { name: 'old', transport: 'stdio', command: 'old-server', disabled: true },
  ]);
  expect(JSON.stringify(result)).not.toMatch(/SECRET/);
});

test.each([
  ['{"mcpServers": {', '', /^not valid JSON: /],
  ['[1, 2]', '', /^expected a JSON object with "mcpServers", got a list$/],
  ['{"servers": {}}', 'mcpServers', /^missing/],
  ['{"mcpServers": ["a"]}', 'mcpServers', /expected an object of servers by name, got a list/],
])('%s: one problem naming the field', async (content, field, message) => {
  const result = await withFile(content);
  expect(result.found).toBe(true);
  expect(result.servers).toEqual([]);
  expect(result.problems).toHaveLength(1);
  expect(result.problems[0]!.field).toBe(field);
  expect(result.problems[0]!.message).toMatch(message);
});

test('a bad server is a problem naming it; the good ones are still listed', async () => {
  const result = await withFile(JSON.stringify({ mcpServers: { good: { url: 'http://localhost:3000/mcp' }, empty: { command: ' ' }, odd: 'npx server', none: {} } }));
  expect(result.servers).toEqual([{ name: 'good', transport: 'http', url: 'http://localhost:3000/mcp' }]);
  expect(result.problems.map((p) => p.field)).toEqual(['mcpServers.empty', 'mcpServers.odd', 'mcpServers.none']);
  expect(result.problems[1]!.message).toBe('expected an object with "command" or "url", got a string');
});

test('a folder named .mcp.json is a problem, not a crash', async () => {
  await fs.mkdir(path.join(tmp, '.mcp.json'));
  const result = await readMcpServersFile(tmp);
  expect(result.found).toBe(true);
  expect(result.problems).toEqual([{ field: '', message: expect.stringMatching(/^cannot be read: /) }]);
});

test('redactUrl: user and password, query values; ${VAR} references stay', () => {
  expect(redactUrl('https://mcp.example.com/v1/mcp')).toBe('https://mcp.example.com/v1/mcp');
  expect(redactUrl('https://token@mcp.example.com/')).toBe('https://***@mcp.example.com/');
  expect(redactUrl('https://${HOST}/mcp?key=${API_KEY}&b=${X:-dflt}')).toBe('https://${HOST}/mcp?key=${API_KEY}&b=${X:-dflt}');
  expect(redactUrl('http://h/p?a=1&b=two#frag')).toBe('http://h/p?a=***&b=***#frag');
  expect(redactUrl('http://h/p?a=x${KEY}')).toBe('http://h/p?a=***');
});
