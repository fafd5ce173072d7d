/**
 * Running one tool call from workflow code (workflows/turn/tool-calls.ts `runToolCall`) against
 * fake activity stubs: an unknown tool and arguments that are not JSON come back to the model as
 * results without an activity; a built-in tool runs as its own activity with a Web UI summary (a
 * read as a local activity when the session allows, going to the files host when this worker is
 * not it); custom and MCP tools go to their own stubs; a tool that still fails after its retries,
 * or that the worker does not have, is a result the model can act on; an interrupt is rethrown.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../../support/workflow-fakes').fakeWorkflowModule());

import { NOT_FILES_HOST } from '../../../common/files-host';
import type { McpCallInput, OfferedTool } from '../../../common/offered-tools';
import { TOOL_NOT_REGISTERED } from '../../../common/offered-tools';
import type { RuntimeContext } from '../../../common/runtime-context';
import { TOOL_SPECS } from '../../../common/tools';
import { runToolCall, type SessionToolSet } from '../../../workflows/turn/tool-calls';
import { activityCancelled, activityFailure, FakeActivities, toolCall, workflowFake } from '../../support/workflow-fakes';

beforeEach(() => workflowFake.reset());

const CONTEXT: RuntimeContext = {
  bundleRoot: '/b',
  coreRoot: '/b',
  projectRoot: '/p',
  variables: {},
  readRoots: ['/b'],
  writeRoots: ['/p'],
  maxReadBytes: 1000,
  secretFiles: [{ pattern: '*.key', source: 'the session setting secretFiles[0]' }],
};
const read = toolCall('r1', 'read_file', { file_path: '{bundle-root}/config.yaml' });

test('tool call: an unknown tool and arguments that are not JSON are results for the model, and no activity runs', async () => {
  const fake = new FakeActivities();
  expect(await runToolCall(fake.stubs, toolCall('x', 'rm_rf', {}), CONTEXT)).toEqual({ success: false, error: 'Unknown tool: rm_rf' });
  const broken = await runToolCall(fake.stubs, toolCall('y', 'read_file', '{"file_path": '), CONTEXT);
  expect(broken.success).toBe(false);
  expect(broken.error).toMatch(/^Arguments for read_file are not valid JSON \(.+\); send a JSON object$/);
  expect(fake.calls).toEqual([]);
});

test('tool call: a built-in tool runs as its own activity with the context, the arguments and a summary', async () => {
  const fake = new FakeActivities().script('save_output', { success: true, path: '/p/docs/a.md' });
  const save = toolCall('s1', 'save_output', { file_path: '{output_folder}/a.md', content: 'hello' });
  expect(await runToolCall(fake.stubs, save, CONTEXT)).toEqual({ success: true, path: '/p/docs/a.md' });
  expect(fake.calls).toEqual([{ name: 'save_output', args: [CONTEXT, { file_path: '{output_folder}/a.md', content: 'hello' }], summary: 'save_output {output_folder}/a.md (5 B)', local: false }]);
});

test('tool call: a read runs as a local activity when the session allows, else as a normal one; a worker off the files host hands it on', async () => {
  const fake = new FakeActivities().respond('read_file', () => ({ success: true, content: 'x' }));
  await runToolCall(fake.stubs, read, CONTEXT, { localReads: true });
  await runToolCall(fake.stubs, read, CONTEXT);
  expect(fake.calls.map((c) => [c.name, c.local, c.summary])).toEqual([
    ['read_file', true, 'read_file {bundle-root}/config.yaml'],
    ['read_file', false, 'read_file {bundle-root}/config.yaml'],
  ]);
  const elsewhere = new FakeActivities().script('read_file', activityFailure('read_file', NOT_FILES_HOST, 'not the files host'), { success: true, content: 'from the host' });
  expect(await runToolCall(elsewhere.stubs, read, CONTEXT, { localReads: true })).toEqual({ success: true, content: 'from the host' });
  expect(elsewhere.calls.map((c) => c.local)).toEqual([true, false]);
  // A write never runs locally.
  expect(fake.stubs.localReads.save_output).toBeUndefined();
});

test('tool call: a tool that fails after its retries is a result naming the cause; a tool the worker lacks says so', async () => {
  const fake = new FakeActivities().script(
    'read_file',
    activityFailure('read_file', 'Error', 'EIO: i/o error'),
    activityFailure('read_file', 'NotFoundError', 'Activity function read_file is not registered on this worker'),
  );
  expect(await runToolCall(fake.stubs, read, CONTEXT)).toEqual({ success: false, error: 'read_file failed: EIO: i/o error' });
  expect(await runToolCall(fake.stubs, read, CONTEXT)).toEqual({
    success: false,
    errorType: TOOL_NOT_REGISTERED,
    error: `read_file failed: the worker that took this call has no tool read_file registered (${TOOL_NOT_REGISTERED}); every worker of this task queue must register the same tools`,
  });
  expect(workflowFake.logged('warn')).toEqual(['Tool activity failed after its retries', 'Tool is not registered on the worker']);
});

test('tool call: an interrupt is rethrown, not made a result', async () => {
  const fake = new FakeActivities().script('read_file', activityCancelled('read_file'));
  await expect(runToolCall(fake.stubs, read, CONTEXT)).rejects.toThrow('Activity cancelled');
});

test('tool call: custom and MCP tools go to their own activities; an MCP tool of a server not configured is a result', async () => {
  const builtIns = TOOL_SPECS as SessionToolSet['tools'];
  const custom: OfferedTool = { kind: 'custom', name: 'lookup_ticket', access: 'read', retries: 'quick', target: 'id' };
  const mcp: OfferedTool = { kind: 'mcp', name: 'fs__read', access: 'read', retries: 'quick', mcp: { server: 'fs', tool: 'read', retrySafe: true } };
  const orphan: OfferedTool = { kind: 'mcp', name: 'gone__x', access: 'write', retries: 'quick', mcp: { server: 'gone', tool: 'x' } };
  const toolSet: SessionToolSet = { tools: [...builtIns, custom, mcp, orphan], mcpServers: { fs: { command: 'mcp-fs' } } };
  const fake = new FakeActivities().script('lookup_ticket', { success: true, title: 'Login fails' }).script('callMcpTool', { success: true, content: 'file text' });
  expect(await runToolCall(fake.stubs, toolCall('c1', 'lookup_ticket', { id: 'T-1' }), CONTEXT, { toolSet, localReads: true })).toEqual({ success: true, title: 'Login fails' });
  expect(await runToolCall(fake.stubs, toolCall('m1', 'fs__read', { path: 'a.md' }), CONTEXT, { toolSet })).toEqual({ success: true, content: 'file text' });
  expect(await runToolCall(fake.stubs, toolCall('o1', 'gone__x', {}), CONTEXT, { toolSet })).toEqual({
    success: false,
    error: 'gone__x failed: its MCP server gone is not configured in this session',
  });
  expect(fake.calls.map((c) => [c.name, c.local, c.summary])).toEqual([
    ['lookup_ticket', true, 'lookup_ticket T-1'],
    ['callMcpTool', false, 'fs__read'],
  ]);
  expect(fake.inputsOf<McpCallInput>('callMcpTool')[0]).toEqual({
    server: 'fs',
    config: { command: 'mcp-fs' },
    tool: 'read',
    name: 'fs__read',
    args: { path: 'a.md' },
    retrySafe: true,
    projectRoot: '/p',
    secrets: { secretFiles: CONTEXT.secretFiles },
  });
});
