/**
 * Tools of your own on the real dev server: a custom TypeScript tool and the tools of two real MCP
 * servers from npm (filesystem over stdio, everything over stdio), offered to the model, recorded
 * in history when the session starts, approved, interrupted, narrowed by allow-lists, and a call
 * that lands on a worker without the tool.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { ChatMessage, ToolMessage } from '../../common/messages';
import type { McpServerConfig } from '../../common/offered-tools';
import type { SessionState } from '../../common/session-types';
import type { SessionHandle } from '../../client/session-client';
import { defineTool, ToolError } from '../../activities/tools/custom-tool';
import { closeDefaultMcpPool } from '../../activities/mcp/default-pool';
import { hang, text, toolCalls } from '../../fake-model/server';
import { approveUpdate } from '../../common/contract/session-definitions';
import { type SessionHarness } from '../support/session-harness';
import { type FakeLane, type FakeLanes, type LaneHarness, startLaneHarness } from '../support/fake-lanes';
import { startEverythingHttp } from '../mcp/mcp-helpers';
import type { LoopwrightClient } from '../../client/session-client';

jest.setTimeout(90_000);

const BIN = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol');
const filesystemServer = (dir: string): McpServerConfig => ({ command: process.execPath, args: [path.join(BIN, 'server-filesystem/dist/index.js'), dir] });
const everythingServer: McpServerConfig = { command: process.execPath, args: [path.join(BIN, 'server-everything/dist/index.js'), 'stdio'] };

const weatherCalls: string[] = [];
const weather = defineTool({
  name: 'get_weather',
  description: 'The weather in a city today',
  parameters: z.object({ city: z.string().describe('City name') }),
  access: 'read',
  target: 'city',
  run: async ({ city }) => {
    weatherCalls.push(city);
    if (city === 'Atlantis') throw new ToolError('No weather station in Atlantis');
    return `Sunny in ${city}, 21 °C`;
  },
});

let h: SessionHarness;
let suite: LaneHarness | undefined;
/** Each test's own copy of the example bundle, script and requests on the shared fake model (the tests run side by side). */
let lanes: FakeLanes;
let loopwright: LoopwrightClient;
let files: string;

beforeAll(async () => {
  suite = await startLaneHarness({ activities: { tools: [weather] } });
  ({ h, lanes, loopwright } = suite);
  files = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-mcp-files-'));
  fs.writeFileSync(path.join(files, 'notes.txt'), 'MCP notes: hello from the filesystem server\n');
  fs.writeFileSync(path.join(files, '.env'), 'TOKEN=do-not-read\n');
}, 120_000);

afterAll(async () => {
  await suite?.close();
  await closeDefaultMcpPool();
  fs.rmSync(files, { recursive: true, force: true });
});

/** A session on `lane`'s copy of the example bundle. */
function start(lane: FakeLane, extra: Partial<Parameters<LoopwrightClient['start']>[0]> = {}): Promise<SessionHandle> {
  return loopwright.start({ bundlePath: lane.bundle, agentId: 'facilitator', ...extra });
}

function toolResult(messages: ChatMessage[], id: string): Record<string, unknown> {
  const message = messages.find((m): m is ToolMessage => m.role === 'tool' && m.tool_call_id === id);
  if (!message) throw new Error(`no result for ${id}`);
  return JSON.parse(message.content) as Record<string, unknown>;
}

async function waitForState(session: SessionHandle, test: (s: SessionState) => boolean): Promise<SessionState> {
  for (let i = 0; i < 600; i++) {
    const state = await session.state();
    if (test(state)) return state;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('state never matched');
}

/** Every payload of a history, decoded, as one text. */
function decodedPayloads(history: unknown): string {
  const parts: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'data' && (typeof value === 'string' || value instanceof Uint8Array)) parts.push(Buffer.from(value as string, typeof value === 'string' ? 'base64' : undefined).toString('utf8'));
        else walk(value);
      }
    }
  };
  walk(history);
  return parts.join('\n');
}

const offeredNames = (lane: FakeLane, index: number): string[] => (lane.requests[index]!.body!.tools ?? []).map((t: { function: { name: string } }) => t.function.name);

test.concurrent('a custom tool is offered, called as its own activity with a summary, and its ToolError reaches the model', async () => {
  const m = lanes.open();
  m.enqueue(
    toolCalls([
      { id: 'c1', name: 'get_weather', arguments: { city: 'Lisbon' } },
      { id: 'c2', name: 'get_weather', arguments: { city: 'Atlantis' } },
      { id: 'c3', name: 'get_weather', arguments: { town: 'Porto' } },
    ]),
    text('Lisbon is sunny.'),
  );
  const session = await start(m);
  const result = await session.send('weather?');
  expect(result).toMatchObject({ success: true, response: 'Lisbon is sunny.' });
  expect(offeredNames(m, 0)).toEqual(expect.arrayContaining(['read_file', 'execute_workflow', 'save_output', 'get_weather']));
  const messages = await session.turnMessages(result);
  expect(toolResult(messages, 'c1')).toEqual({ success: true, content: 'Sunny in Lisbon, 21 °C' });
  expect(toolResult(messages, 'c2')).toEqual({ success: false, error: 'No weather station in Atlantis' });
  expect(toolResult(messages, 'c3')).toMatchObject({ success: false, error: expect.stringMatching(/^Invalid arguments for get_weather: city/) });
  expect(weatherCalls).toEqual(expect.arrayContaining(['Lisbon', 'Atlantis']));
  expect(weatherCalls).not.toContain('Porto');
  const state = await session.state();
  expect(state.tools).toEqual(
    expect.arrayContaining([
      { name: 'get_weather', kind: 'custom', access: 'read' },
      { name: 'save_output', kind: 'builtin', access: 'write' },
    ]),
  );
  // The listing and the call are in history: the first with the tool's record, the second as an activity named like the tool.
  const history = await session.workflow.fetchHistory();
  const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
  expect(scheduled).toContain('listTools');
  const local = history.events!.filter((e) => e.markerRecordedEventAttributes).length;
  // A read may run as a local activity (a marker) or a normal one; either way it is recorded.
  expect(scheduled.filter((n) => n === 'get_weather').length + local).toBeGreaterThan(0);
  await session.end();
});

test.concurrent('allow-lists: the session names the tools the model is offered', async () => {
  const m = lanes.open();
  m.enqueue(toolCalls([{ id: 'w', name: 'save_output', arguments: { file_path: '{output_folder}/x.md', content: 'x' } }]), text('done'));
  const session = await start(m, { tools: ['read_file', 'get_*'] });
  const result = await session.send('go');
  expect(offeredNames(m, 0).filter((n) => !['ask_question', 'task_completion'].includes(n))).toEqual(['read_file', 'get_weather']);
  expect(toolResult(await session.turnMessages(result), 'w')).toEqual({ success: false, error: 'Unknown tool: save_output' });
  await session.end();
});

test.concurrent('MCP: tools of two real servers are listed, read-only ones run at once, a write waits for approval, a secret path is refused', async () => {
  const m = lanes.open();
  m.enqueue(
    toolCalls([
      { id: 'r', name: 'fs__read_text_file', arguments: { path: path.join(files, 'notes.txt') } },
      { id: 'e', name: 'everything__echo', arguments: { message: 'ping' } },
      { id: 's', name: 'fs__read_text_file', arguments: { path: path.join(files, '.env') } },
      { id: 'bad', name: 'fs__read_text_file', arguments: { path: '/etc/hostname' } },
    ]),
    toolCalls([{ id: 'w', name: 'fs__write_file', arguments: { path: path.join(files, 'out.md'), content: '# written by MCP\n' } }]),
    text('All done.'),
  );
  const session = await start(m, { mcpServers: { fs: filesystemServer(files), everything: everythingServer }, allowTools: ['everything__*'] });
  const turn = session.send('use the servers');
  const waiting = await waitForState(session, (s) => s.pendingApprovals.length > 0);
  expect(waiting.pendingApprovals).toEqual([expect.objectContaining({ callId: 'w', tool: 'fs__write_file', path: path.join(files, 'out.md') })]);
  expect(fs.existsSync(path.join(files, 'out.md'))).toBe(false);
  await session.workflow.executeUpdate(approveUpdate, { args: ['w'] });
  const result = await turn;
  expect(result).toMatchObject({ success: true, response: 'All done.' });
  const names = offeredNames(m, 0);
  expect(names).toEqual(expect.arrayContaining(['get_weather', 'fs__read_text_file', 'fs__write_file', 'everything__echo']));
  const messages = await session.turnMessages(result);
  expect(toolResult(messages, 'r')).toMatchObject({ success: true, content: expect.stringContaining('hello from the filesystem server') });
  expect(toolResult(messages, 'e')).toMatchObject({ success: true, content: expect.stringContaining('ping') });
  expect(toolResult(messages, 's')).toMatchObject({ success: false, error: expect.stringMatching(/^Secret file refused/) });
  expect(JSON.stringify(messages)).not.toContain('do-not-read');
  expect(toolResult(messages, 'bad')).toMatchObject({ success: false, error: expect.stringMatching(/denied|outside|not allowed/i) });
  expect(toolResult(messages, 'w')).toMatchObject({ success: true });
  expect(fs.readFileSync(path.join(files, 'out.md'), 'utf8')).toBe('# written by MCP\n');
  const state = await session.state();
  expect(state.tools).toEqual(
    expect.arrayContaining([
      { name: 'fs__read_text_file', kind: 'mcp', access: 'read', server: 'fs' },
      { name: 'fs__write_file', kind: 'mcp', access: 'write', approval: 'required', server: 'fs' },
    ]),
  );
  await session.end();
});

test.concurrent('MCP: a server that does not start is a warning; the session offers the rest and goes on', async () => {
  const m = lanes.open();
  m.enqueue(text('fine'));
  const session = await start(m, { mcpServers: { broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] } } });
  await expect(session.send('hi')).resolves.toMatchObject({ success: true, response: 'fine' });
  const state = await session.state();
  expect(state.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^Tools: MCP server broken: /)]));
  expect(offeredNames(m, 0)).toContain('get_weather');
  await session.end();
});

test.concurrent('an interrupt stops a running MCP call and the session takes the next message', async () => {
  const m = lanes.open();
  m.enqueue(toolCalls([{ id: 'long', name: 'everything__trigger-long-running-operation', arguments: { duration: 30, steps: 30 } }]));
  const session = await start(m, { mcpServers: { everything: everythingServer }, allowTools: ['everything__*'] });
  const turn = session.send('take long');
  await waitForState(session, (s) => s.runningTools.some((t) => t.name === 'everything__trigger-long-running-operation'));
  await session.interrupt();
  await expect(turn).resolves.toMatchObject({ status: 'interrupted' });
  m.enqueue(text('back'));
  await expect(session.send('again')).resolves.toMatchObject({ success: true, response: 'back' });
  await session.end();
});

test.concurrent('a call that lands on a worker without the tool fails at once with a typed result, not a hang', async () => {
  const m = lanes.open();
  const queue = `tools-missing-${process.pid}`;
  const withTool = await h.startWorker({ taskQueue: queue, activities: { tools: [weather] } });
  const session = await withTool.loopwright.start({ bundlePath: m.bundle, agentId: 'facilitator' });
  await waitForState(session, (s) => s.status === 'waiting_for_user');
  await withTool.stop();
  const without = await h.startWorker({ taskQueue: queue });
  m.enqueue(toolCalls([{ id: 'x', name: 'get_weather', arguments: { city: 'Oslo' } }]), text('No weather.'));
  const result = await session.send('weather in Oslo?');
  expect(result).toMatchObject({ success: true, response: 'No weather.' });
  expect(toolResult(await session.turnMessages(result), 'x')).toMatchObject({
    success: false,
    errorType: 'LoopwrightToolNotRegistered',
    error: expect.stringContaining('has no tool get_weather registered'),
  });
  await session.end();
  await without.stop();
});

test.concurrent('a session waits for the hanging model while listing never blocks it: the tool list is there before the first call', async () => {
  const m = lanes.open();
  m.enqueue(hang());
  const session = await start(m);
  const state = await waitForState(session, (s) => s.status === 'waiting_for_user');
  expect(state.tools?.map((t) => t.name)).toEqual(expect.arrayContaining(['read_file', 'get_weather']));
  await session.end();
});

test.concurrent("the project's .mcp.json is read at start, and refreshTools lists again after it changes", async () => {
  const m = lanes.open();
  // The lane's copy of the bundle lies in a folder of its own: that folder is the project.
  const projectRoot = path.dirname(m.bundle);
  const config = path.join(projectRoot, '.mcp.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { everything: everythingServer } }));
  try {
    const session = await start(m, { projectRoot });
    const first = await waitForState(session, (s) => s.status === 'waiting_for_user');
    expect(first.tools?.map((t) => t.name)).toContain('everything__echo');
    expect(first.tools?.some((t) => t.server === 'fs')).toBe(false);
    fs.writeFileSync(config, JSON.stringify({ mcpServers: { fs: filesystemServer(files), everything: { ...everythingServer, disabled: true } } }));
    const tools = await session.refreshTools();
    expect(tools.map((t) => t.name)).toContain('fs__read_text_file');
    expect(tools.some((t) => t.server === 'everything')).toBe(false);
    m.enqueue(text('ok'));
    await session.send('hi');
    expect(offeredNames(m, 0)).toContain('fs__read_text_file');
    expect(offeredNames(m, 0)).not.toContain('everything__echo');
    await session.end();
  } finally {
    fs.rmSync(config, { force: true });
  }
});

test.concurrent('MCP over streamable HTTP: a server given by URL with a header from the environment is listed and called', async () => {
  const m = lanes.open();
  const server = await startEverythingHttp();
  process.env.LW_TEST_MCP_TOKEN = 'token-from-the-environment-1234';
  try {
    m.enqueue(toolCalls([{ id: 'sum', name: 'web__get-sum', arguments: { a: 2, b: 40 } }]), text('42'));
    const session = await start(m, { mcpServers: { web: { ...server.config, headers: { Authorization: 'Bearer ${LW_TEST_MCP_TOKEN}' } } } });
    const result = await session.send('add');
    expect(result).toMatchObject({ success: true, response: '42' });
    expect(toolResult(await session.turnMessages(result), 'sum')).toMatchObject({ success: true, content: expect.stringContaining('42') });
    // History holds the variable's name, never its value (payloads decoded).
    const history = decodedPayloads(await session.workflow.fetchHistory());
    expect(history.includes('${LW_TEST_MCP_TOKEN}')).toBe(true);
    expect(history.includes('token-from-the-environment-1234')).toBe(false);
    await session.end();
  } finally {
    delete process.env.LW_TEST_MCP_TOKEN;
    await server.stop();
  }
});

describe('writing a document step by step', () => {
  /** The file-changing calls of a history: each call's scheduled and completed event ids, in schedule order. */
  function writeEvents(history: Awaited<ReturnType<SessionHandle['workflow']['fetchHistory']>>): { id: string; scheduled: number; completed: number }[] {
    const events = history.events ?? [];
    const completedAt = new Map<number, number>();
    for (const e of events) {
      const done = e.activityTaskCompletedEventAttributes;
      if (done) completedAt.set(Number(done.scheduledEventId), Number(e.eventId));
    }
    return events
      .filter((e) => ['save_output', 'edit_file'].includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''))
      .map((e) => ({ id: e.activityTaskScheduledEventAttributes!.activityId!, scheduled: Number(e.eventId), completed: completedAt.get(Number(e.eventId)) ?? -1 }));
  }

  const patchMarkers = (history: Awaited<ReturnType<SessionHandle['workflow']['fetchHistory']>>): string[] =>
    (history.events ?? [])
      .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
      .map((e) => decodedPayloads(e.markerRecordedEventAttributes!.details))
      .filter((text) => text.includes('loopwright-serial-writes'));

  test.concurrent('tools workflow: a scripted model saves a document, appends a section, then edits its front matter in place', async () => {
    const m = lanes.open();
    const file = '{output_folder}/step-doc.md';
    m.enqueue(
      toolCalls([{ id: 's1', name: 'save_output', arguments: { file_path: file, content: '---\nstepsCompleted: []\n---\n\n# Tool library\n' } }]),
      toolCalls([{ id: 's2', name: 'save_output', arguments: { file_path: file, content: '\n## Goals\n\nLend tools to neighbours.\n', mode: 'append' } }]),
      toolCalls([{ id: 's3', name: 'edit_file', arguments: { file_path: file, old_text: 'stepsCompleted: []', new_text: 'stepsCompleted: [1, 2]' } }]),
      text('Steps 1 and 2 are saved.'),
    );
    const session = await start(m);
    const result = await session.send('run the steps');
    expect(result).toMatchObject({ success: true, response: 'Steps 1 and 2 are saved.' });
    const messages = await session.turnMessages(result);
    const saved = toolResult(messages, 's1');
    expect(saved).toMatchObject({ success: true });
    expect(toolResult(messages, 's2')).toMatchObject({ success: true, path: saved.path, appended: Buffer.byteLength('\n## Goals\n\nLend tools to neighbours.\n') });
    expect(toolResult(messages, 's3')).toMatchObject({ success: true, path: saved.path, replacements: 1 });
    expect(fs.readFileSync(saved.path as string, 'utf8')).toBe('---\nstepsCompleted: [1, 2]\n---\n\n# Tool library\n\n## Goals\n\nLend tools to neighbours.\n');
    // One write per reply: nothing to order, so the serial-writes patch was never asked for.
    expect(patchMarkers(await session.workflow.fetchHistory())).toEqual([]);
    await session.end();
  });

  test.concurrent('tools workflow: writes to one file in one reply run one after the other, in reply order; other calls stay parallel', async () => {
    const m = lanes.open();
    const file = '{output_folder}/one-reply.md';
    m.enqueue(
      toolCalls([{ id: 'w0', name: 'save_output', arguments: { file_path: file, content: '---\nstepsCompleted: []\n---\n' } }]),
      toolCalls([
        { id: 'a1', name: 'save_output', arguments: { file_path: file, content: '\n## Step 1\n', mode: 'append' } },
        { id: 'other', name: 'save_output', arguments: { file_path: '{output_folder}/elsewhere.md', content: 'x' } },
        { id: 'a2', name: 'save_output', arguments: { file_path: file, content: '\n## Step 2\n', mode: 'append' } },
        { id: 'e3', name: 'edit_file', arguments: { file_path: file, old_text: 'stepsCompleted: []', new_text: 'stepsCompleted: [1, 2]' } },
      ]),
      text('Both steps are in.'),
    );
    const session = await start(m);
    const result = await session.send('two steps at once');
    expect(result).toMatchObject({ success: true, response: 'Both steps are in.' });
    const messages = await session.turnMessages(result);
    for (const id of ['a1', 'other', 'a2', 'e3']) expect(toolResult(messages, id)).toMatchObject({ success: true });
    const written = toolResult(messages, 'w0').path as string;
    expect(fs.readFileSync(written, 'utf8')).toBe('---\nstepsCompleted: [1, 2]\n---\n\n## Step 1\n\n## Step 2\n');
    // In history: each write to the file is scheduled only after the one before it completed; the
    // write to another file was scheduled with the first one; the patch marker was recorded once.
    const history = await session.workflow.fetchHistory();
    const writes = writeEvents(history).slice(1);
    expect(writes).toHaveLength(4);
    const [a1, other, a2, e3] = writes;
    expect(a2!.scheduled).toBeGreaterThan(a1!.completed);
    expect(e3!.scheduled).toBeGreaterThan(a2!.completed);
    expect(other!.scheduled).toBeLessThan(a1!.completed);
    expect(patchMarkers(history)).toHaveLength(1);
    await session.end();
  });
});
