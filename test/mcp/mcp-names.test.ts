import { TOOL_NAME_PATTERN } from '../../common/offered-tools';
import { mcpToolName, toListedTools, toolParameters, toToolResult } from '../../activities/mcp';

describe('mcpToolName', () => {
  test('server__tool when that is a valid function name', () => {
    expect(mcpToolName('github', 'search_issues')).toBe('github__search_issues');
    expect(mcpToolName('fs', 'read-text-file')).toBe('fs__read-text-file');
  });

  test('invalid characters become _, with a hash that keeps apart names that sanitise alike', () => {
    const dotted = mcpToolName('srv', 'a.b')!;
    const spaced = mcpToolName('srv', 'a b')!;
    expect(dotted).toMatch(/^srv__a_b_[0-9a-f]{6}$/);
    expect(spaced).toMatch(/^srv__a_b_[0-9a-f]{6}$/);
    expect(dotted).not.toBe(spaced);
    expect(dotted).not.toBe(mcpToolName('srv', 'a_b'));
    // The same tool always gets the same name.
    expect(mcpToolName('srv', 'a.b')).toBe(dotted);
  });

  test('a long name is cut to 64 with the hash, keeping the server part whole', () => {
    const server = 's'.repeat(40);
    const one = mcpToolName(server, `${'t'.repeat(100)}1`)!;
    const two = mcpToolName(server, `${'t'.repeat(100)}2`)!;
    for (const name of [one, two]) {
      expect(name).toMatch(TOOL_NAME_PATTERN);
      expect(name).toHaveLength(64);
      expect(name.startsWith(`${server}__`)).toBe(true);
    }
    expect(one).not.toBe(two);
    expect(mcpToolName('fs', `${'é'.repeat(30)}🙂`)).toMatch(TOOL_NAME_PATTERN);
  });

  test('undefined only when no name can be made', () => {
    expect(mcpToolName('srv', '')).toBeUndefined();
    expect(mcpToolName('bad server', 'tool')).toBeUndefined();
    expect(mcpToolName('a__b', 'tool')).toBeUndefined();
  });
});

describe('toolParameters', () => {
  test('keeps the schema, drops $schema, and makes it an object with properties', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], $schema: 'http://json-schema.org/draft-07/schema#' };
    expect(toolParameters(schema)).toEqual({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] });
    expect(schema.$schema).toBeDefined();
    expect(toolParameters({ type: 'object' })).toEqual({ type: 'object', properties: {} });
    expect(toolParameters(undefined)).toEqual({ type: 'object', properties: {} });
  });
});

describe('toListedTools', () => {
  test('namespaces names, keeps known annotations, and warns about renamed and clashing tools', () => {
    const listing = toListedTools('srv', [
      { name: 'ok', description: 'fine', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true, destructiveHint: 'no' as unknown as boolean } },
      { name: 'x.y', title: 'Ex why', inputSchema: { type: 'object' } },
      { name: '', inputSchema: { type: 'object' } },
    ]);
    expect(listing.tools).toEqual([
      { server: 'srv', tool: 'ok', name: 'srv__ok', description: 'fine', parameters: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } },
      { server: 'srv', tool: 'x.y', name: expect.stringMatching(/^srv__x_y_[0-9a-f]{6}$/), description: 'Ex why', parameters: { type: 'object', properties: {} }, annotations: { title: 'Ex why' } },
    ]);
    expect(listing.warnings).toEqual([expect.stringMatching(/^MCP server srv: tool "x\.y" is offered as srv__x_y_/), 'MCP server srv: tool "" left out: no function name can be made of it']);
  });
});

describe('toToolResult', () => {
  test('joins text, describes binary content and keeps embedded text with its URI', () => {
    const result = toToolResult({
      content: [
        { type: 'text', text: 'one' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'r://t', text: 'body' } },
        { type: 'resource_link', uri: 'r://l', name: 'l' },
      ],
    });
    expect(result).toEqual({ success: true, content: 'one\n[image image/png, 3 bytes]\n[resource r://t]\nbody\n[resource link r://l (l)]' });
  });

  test('structured content only when there is no text; isError becomes the error', () => {
    expect(toToolResult({ content: [], structuredContent: { n: 1 } })).toEqual({ success: true, content: '', structured: { n: 1 } });
    expect(toToolResult({ content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } })).toEqual({ success: true, content: '{"n":1}' });
    expect(toToolResult({ content: [{ type: 'text', text: 'bad path' }], isError: true })).toEqual({ success: false, error: 'bad path' });
    expect(toToolResult({ content: [], isError: true })).toEqual({ success: false, error: 'the tool reported an error without saying what' });
  });
});
