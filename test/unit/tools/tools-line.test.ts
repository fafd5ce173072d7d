/** The Web UI's line about a session's tools (workflows/session/web-ui.ts). */
import { sessionDetails, toolsLine } from '../../../workflows/session/web-ui';
import type { OfferedToolSummary, SessionState } from '../../../common/session-types';

const tools: OfferedToolSummary[] = [
  { name: 'read_file', kind: 'builtin', access: 'read' },
  { name: 'save_output', kind: 'builtin', access: 'write' },
  { name: 'get_weather', kind: 'custom', access: 'read' },
  { name: 'fs__read_text_file', kind: 'mcp', access: 'read', server: 'fs' },
  { name: 'fs__write_file', kind: 'mcp', access: 'write', approval: 'required', server: 'fs' },
  { name: 'everything__echo', kind: 'mcp', access: 'read', server: 'everything' },
];

test('counts the tools by kind, names the custom ones and the MCP servers, and says how many need approval', () => {
  expect(toolsLine(tools)).toBe('tools: 2 built-in · 1 custom (get_weather) · 3 MCP (fs, everything) · 1 need approval');
  expect(toolsLine(tools.slice(0, 2))).toBe('tools: 2 built-in');
});

test('the session details carry the line once the tools are listed, and not before', () => {
  const state = { status: 'waiting_for_user', turn: 0, iteration: 0, maxIterations: 50, run: 1, usage: { totalTokens: 0 }, runningTools: [], pendingApprovals: [] } as unknown as SessionState;
  expect(sessionDetails(state)).not.toContain('tools:');
  expect(sessionDetails({ ...state, tools })).toContain('tools: 2 built-in · 1 custom (get_weather)');
});
