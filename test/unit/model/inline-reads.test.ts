/**
 * The worker's side of inline reads (activities/model/inline-reads.ts) and the workflow's choice of
 * tools (workflows/turn/inline-reads.ts), without a server: what runs, what is left to the workflow.
 */
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { INLINE_RESULTS_BYTES, TOOLS_UNKNOWN } from '../../../common/activity-types';
import { toolsRefused } from '../../../workflows/turn/model-calls';
import type { ToolCall, ToolResult } from '../../../common/messages';
import type { RuntimeContext } from '../../../common/runtime-context';
import { TOOL_DEFINITIONS } from '../../../common/tool-definitions';
import { InlineReader } from '../../../activities/model/inline-reads';
import { RunCache } from '../../../activities/transcript/run-cache';
import { inlineRequest, inlineToolNames, toolsRequest, type WorkerCopies } from '../../../workflows/turn/inline-reads';

const RUN = { workflowId: 'w', runId: 'r' };
const context = (filesHost?: string): RuntimeContext => ({
  bundleRoot: '/b',
  coreRoot: '/b',
  projectRoot: '/p',
  variables: {},
  readRoots: ['/b'],
  writeRoots: ['/p'],
  maxReadBytes: 1000,
  ...(filesHost ? { filesHost } : {}),
});
const call = (id: string, name: string, args: string): ToolCall => ({ id, type: 'function', function: { name, arguments: args } });
const signal = () => new AbortController().signal;

function reader(run: (name: string, args: unknown) => Promise<ToolResult>, hostId?: string) {
  const calls: string[] = [];
  const r = new InlineReader(
    {
      run: (name, _ctx, args) => {
        calls.push(name);
        return run(name, args);
      },
      ...(hostId ? { hostId } : {}),
    },
    new RunCache(2),
  );
  return { r, calls };
}

test('inline reads: only the allowed tools run; arguments that are not JSON and tools that throw are left to the workflow', async () => {
  const { r, calls } = reader(async (name, args) => {
    if ((args as { file_path?: string }).file_path === 'boom') throw new Error('EIO');
    return { success: true, name };
  });
  const out = await r.run(
    RUN,
    { tools: ['read_file'], context: context() },
    [call('a', 'read_file', '{"file_path":"x"}'), call('b', 'save_output', '{}'), call('c', 'read_file', '{"file_'), call('d', 'read_file', '{"file_path":"boom"}')],
    signal(),
  );
  expect(out.toolResults).toEqual([{ success: true, name: 'read_file' }, null, null, null]);
  expect(calls).toEqual(['read_file', 'read_file']);
});

test('inline reads: the context is kept per run; without it the worker asks for it and runs nothing', async () => {
  const { r, calls } = reader(async () => ({ success: true }));
  expect(await r.run({ workflowId: 'w', runId: 'other' }, { tools: ['read_file'] }, [call('a', 'read_file', '{}')], signal())).toEqual({ inlineNeedsContext: true });
  expect(calls).toEqual([]);
  await r.run(RUN, { tools: ['read_file'], context: context() }, [call('a', 'read_file', '{}')], signal());
  expect((await r.run(RUN, { tools: ['read_file'] }, [call('b', 'read_file', '{}')], signal())).toolResults).toEqual([{ success: true }]);
  // Least recently used out: two more runs push this one out.
  await r.run({ workflowId: 'w', runId: 'r2' }, { tools: ['read_file'], context: context() }, [], signal());
  await r.run({ workflowId: 'w', runId: 'r3' }, { tools: ['read_file'], context: context() }, [], signal());
  expect(await r.run(RUN, { tools: ['read_file'] }, [call('c', 'read_file', '{}')], signal())).toEqual({ inlineNeedsContext: true });
});

test('inline reads: nothing runs on a worker of another host than the files host', async () => {
  const { r, calls } = reader(async () => ({ success: true }), 'host-a');
  expect(await r.run(RUN, { tools: ['read_file'], context: context('host-b') }, [call('a', 'read_file', '{}')], signal())).toEqual({});
  expect(calls).toEqual([]);
  expect((await r.run(RUN, { tools: ['read_file'], context: context('host-a') }, [call('a', 'read_file', '{}')], signal())).toolResults).toHaveLength(1);
});

test('inline reads: results past the inline size limit are left to the workflow, in call order', async () => {
  const big = 'x'.repeat(Math.floor(INLINE_RESULTS_BYTES * 0.6));
  const { r } = reader(async () => ({ success: true, content: big }));
  const out = await r.run(RUN, { tools: ['read_file'], context: context() }, [call('a', 'read_file', '{}'), call('b', 'read_file', '{}'), call('c', 'read_file', '{}')], signal());
  expect(out.toolResults?.map((x) => x !== null)).toEqual([true, false, false]);
});

test('inline reads: a cancelled activity ends cancelled, not with results', async () => {
  const controller = new AbortController();
  const { r } = reader(async () => {
    controller.abort(new Error('cancelled'));
    return { success: true };
  });
  await expect(r.run(RUN, { tools: ['read_file'], context: context() }, [call('a', 'read_file', '{}')], controller.signal)).rejects.toThrow('cancelled');
});

test('inline reads: the workflow offers the built-in reads the session offers that need no approval', () => {
  const all = () => true;
  expect(inlineToolNames(TOOL_DEFINITIONS, undefined, all, undefined)).toEqual(['read_file', 'execute_workflow', 'list_files', 'search_files', 'activate_skill']);
  expect(inlineToolNames(TOOL_DEFINITIONS, undefined, all, (c) => c.function.name === 'read_file')).toEqual(['execute_workflow', 'list_files', 'search_files', 'activate_skill']);
  expect(
    inlineToolNames(
      TOOL_DEFINITIONS.filter((t) => t.function.name !== 'execute_workflow'),
      undefined,
      all,
      undefined,
    ),
  ).toEqual(['read_file', 'list_files', 'search_files', 'activate_skill']);
  expect(inlineToolNames(TOOL_DEFINITIONS, undefined, () => false, undefined)).toEqual([]);

  const state: WorkerCopies = {};
  const ctx = context();
  expect(inlineRequest(state, ['read_file'], ctx)).toEqual({ tools: ['read_file'], context: ctx });
  expect(inlineRequest(state, ['read_file'], ctx)).toEqual({ tools: ['read_file'] });
  state.contextSent = undefined;
  expect(inlineRequest(state, ['read_file'], ctx).context).toBe(ctx);

  // Tool definitions: sent with a key once, then the key alone; a new set travels again.
  const defs = [...TOOL_DEFINITIONS];
  const first = toolsRequest(state, defs);
  expect(first.tools).toBe(defs);
  expect(first.toolsKey).toMatch(/^[0-9a-f]{32}$/);
  expect(toolsRequest(state, defs)).toEqual({ toolsKey: first.toolsKey });
  const fewer = defs.slice(1);
  const second = toolsRequest(state, fewer);
  expect(second.tools).toBe(fewer);
  expect(second.toolsKey).not.toBe(first.toolsKey);
  // The same definitions in another array have the same key.
  expect(toolsRequest({}, [...fewer]).toolsKey).toBe(second.toolsKey);
});

test('tool definitions by key: only a worker lacking them makes the workflow send them again, never a model server 400', () => {
  const wrap = (cause: Error) => new ActivityFailure('activity failed', 'callModelV2', '7', RetryState.NON_RETRYABLE_FAILURE, 'w', cause);
  const noDetails = { status: null, providerType: null, providerCode: null, requestId: null, retryAfterMs: null };
  expect(toolsRefused(wrap(ApplicationFailure.create({ type: TOOLS_UNKNOWN, message: 'no tools under key', nonRetryable: true })))).toBe(true);
  // A worker from before keys: its input check misses `tools`.
  const oldWorker = ApplicationFailure.create({
    type: 'ModelBadRequest',
    message: 'Invalid model call input: tools: Invalid input: expected array, received undefined',
    nonRetryable: true,
    details: [noDetails],
  });
  expect(toolsRefused(wrap(oldWorker))).toBe(true);
  // The model server's own 400 is the turn's failure.
  const server400 = ApplicationFailure.create({ type: 'ModelBadRequest', message: 'Invalid model call input: tools are bad', nonRetryable: true, details: [{ ...noDetails, status: 400 }] });
  expect(toolsRefused(wrap(server400))).toBe(false);
  expect(toolsRefused(wrap(ApplicationFailure.create({ type: 'ModelServerError', message: 'x' })))).toBe(false);
});
