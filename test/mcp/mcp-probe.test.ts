/**
 * The pool against the probe server (fixtures/probe-server.js), for what the reference servers do
 * not show: a paged tool list with names the model API refuses, every kind of content, the server's
 * side of a cancellation, and a server that exits mid-call (with a secret on its stderr).
 */
import * as os from 'node:os';
import { McpPool } from '../../activities/mcp';
import { probeServer } from './mcp-helpers';

const SECRET = 'probe-secret-value-98765';
let pool: McpPool;
const probe = probeServer();
const project = os.tmpdir();

beforeAll(() => {
  pool = new McpPool({ env: { PROBE_SECRET_VALUE: SECRET } });
});

afterAll(async () => {
  await pool.closeAll();
});

const call = (tool: string, args: unknown = {}, options: Partial<Parameters<McpPool['callTool']>[5]> = {}) => pool.callTool('probe', probe, project, tool, args, { retrySafe: false, ...options });

test('every page of the tool list is read; invalid names are made valid and reported', async () => {
  const { tools, warnings } = await pool.listTools('probe', probe, project);
  expect(tools.map((t) => t.tool)).toEqual([
    'echo-probe',
    'dotted.name',
    'dotted_name',
    `long-${'x'.repeat(70)}`,
    'wait-for-cancel',
    'cancellations',
    'mixed',
    'structured-only',
    'fail',
    'exit',
    'leak-and-exit',
  ]);
  const names = tools.map((t) => t.name);
  expect(new Set(names).size).toBe(names.length);
  expect(names[1]).toMatch(/^probe__dotted_name_[0-9a-f]{6}$/);
  expect(names[2]).toBe('probe__dotted_name');
  expect(names[3]).toHaveLength(64);
  expect(warnings).toEqual([
    expect.stringMatching(/^MCP server probe: tool "dotted\.name" is offered as probe__dotted_name_/),
    expect.stringMatching(/^MCP server probe: tool "long-x+" is offered as probe__long-x+_[0-9a-f]{6} /),
  ]);
  expect(tools[0]!.parameters).toEqual({ type: 'object', properties: { text: { type: 'string' } } });
  expect(tools[1]).toMatchObject({ description: 'Dotted', parameters: { type: 'object', properties: {} }, annotations: { title: 'Dotted', readOnlyHint: true } });
});

test('every kind of content becomes text the model can read', async () => {
  await expect(call('mixed')).resolves.toEqual({
    success: true,
    content: [
      'first',
      '[image image/png, 1234 bytes]',
      '[audio audio/wav, 10 bytes]',
      '[resource probe://notes text/plain]',
      'note text',
      '[resource probe://blob application/octet-stream, 5 bytes]',
      '[resource link probe://linked (linked)]',
    ].join('\n'),
  });
  await expect(call('structured-only')).resolves.toEqual({ success: true, content: '', structured: { answer: 42 } });
  await expect(call('fail')).resolves.toEqual({ success: false, error: 'it went wrong' });
  await expect(call('echo-probe', { text: 'probe says hi' })).resolves.toEqual({ success: true, content: 'probe says hi' });
});

test('a tool the server does not know is a failed result naming it', async () => {
  const result = await call('no-such-tool');
  expect(result.success).toBe(false);
  expect(result.error).toMatch(/^MCP server probe could not run no-such-tool: .*unknown tool no-such-tool/);
});

test('cancelling a call tells the server (notifications/cancelled), with the reason', async () => {
  const controller = new AbortController();
  const reason = new Error('the user interrupted');
  const waiting = call('wait-for-cancel', {}, { signal: controller.signal, onProgress: () => controller.abort(reason) });
  await expect(waiting).rejects.toBe(reason);
  const seen = await call('cancellations');
  expect(JSON.parse(String(seen.content))).toEqual(['Error: the user interrupted']);
});

test('a call over its timeout is cancelled on the server too', async () => {
  const before = JSON.parse(String((await call('cancellations')).content)) as string[];
  await expect(call('wait-for-cancel', {}, { timeoutMs: 100 })).resolves.toEqual({
    success: false,
    error: 'MCP server probe: wait-for-cancel timed out after 100 ms',
  });
  const after = JSON.parse(String((await call('cancellations')).content)) as string[];
  expect(after).toHaveLength(before.length + 1);
  expect(after.at(-1)).toMatch(/timed out/i);
});

test('a server that exits mid-call: not retried unless retry-safe, and then said to have stopped twice', async () => {
  const once = await call('exit');
  expect(once.success).toBe(false);
  expect(once.error).toMatch(/^MCP server probe stopped during exit; the call may or may not have taken effect\. Check before calling it again/);
  const twice = await call('exit', {}, { retrySafe: true });
  expect(twice).toEqual({ success: false, error: 'MCP server probe stopped during exit again, after being started again for a second try.' });
  // And it serves the next call.
  await expect(call('echo-probe', { text: 'back' })).resolves.toEqual({ success: true, content: 'back' });
});

test('what a dying server wrote to stderr is in the message, without the secrets of its configuration', async () => {
  const config = probeServer({ env: { PROBE_SECRET: '${PROBE_SECRET_VALUE}' } });
  const result = await pool.callTool('probe', config, project, 'leak-and-exit', {}, { retrySafe: false });
  expect(result.success).toBe(false);
  expect(result.error).toContain('Its last output (stderr):\nfatal: token [redacted] refused');
  expect(result.error).not.toContain(SECRET);
});
