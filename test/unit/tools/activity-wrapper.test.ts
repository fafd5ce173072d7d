/**
 * The tool activities (TOOL_ACTIVITIES) in a mock activity context: they heartbeat, end at once
 * when cancelled even while the tool is stuck (as in a read of a hung network mount), and never
 * return a result too large for a Temporal payload. Real files in a temp folder.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ToolResult } from '../../../common/messages';
import type { RuntimeContext } from '../../../common/runtime-context';
import { boundToolResult, encodedToolResultBytes, MAX_TOOL_RESULT_BYTES, type ToolActivity, type ToolFunction, toToolActivity } from '../../../activities/tools/activity-wrapper';
import { TOOL_ACTIVITIES, TOOLS } from '../../../activities/tools/dispatch';
import { readFileTool } from '../../../activities/tools/read-file';
import { saveOutputTool } from '../../../activities/tools/save-output';
import { listFiles, makeFixture, type Fixture } from './fixture';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture({ maxReadBytes: 4 * 1024 * 1024 });
});
afterEach(async () => {
  await fx.cleanup();
});

/** A mock activity context that records heartbeats and keeps the SDK's logs quiet. */
function mockEnv(): { env: MockActivityEnvironment; beats: number[] } {
  const env = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR', () => undefined) });
  const beats: number[] = [];
  env.on('heartbeat', () => beats.push(Date.now()));
  return { env, beats };
}

/** Runs a tool activity in `env` (typed: MockActivityEnvironment.run infers unknown). */
function runIn(env: MockActivityEnvironment, activity: ToolActivity, args: unknown, ctx: RuntimeContext = fx.ctx): Promise<ToolResult> {
  return env.run(activity, ctx, args);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('tool activities: heartbeats', () => {
  test('heartbeats at once and every second while the tool runs, and stops when it ends', async () => {
    // Jest's fake clock: the beats fall at exact times and the test waits for none of them.
    jest.useFakeTimers({ now: 1_000_000 });
    try {
      const { env, beats } = mockEnv();
      const slow: ToolFunction = async () => {
        await sleep(2300);
        return { success: true };
      };
      const running = runIn(env, toToolActivity('read_file', slow), {});
      await jest.advanceTimersByTimeAsync(2300);
      await expect(running).resolves.toEqual({ success: true });
      // One at the start, then one per second: at 1 s and 2 s.
      expect(beats).toEqual([1_000_000, 1_001_000, 1_002_000]);
      await jest.advanceTimersByTimeAsync(5000);
      expect(beats).toHaveLength(3);
    } finally {
      jest.useRealTimers();
    }
  });

  test('as a local activity it never heartbeats (there is nothing on the server to heartbeat)', async () => {
    jest.useFakeTimers();
    try {
      const env = new MockActivityEnvironment({ isLocal: true }, { logger: new DefaultLogger('ERROR', () => undefined) });
      const beats: number[] = [];
      env.on('heartbeat', () => beats.push(Date.now()));
      const slow: ToolFunction = async () => {
        await sleep(1200);
        return { success: true };
      };
      const running = runIn(env, toToolActivity('read_file', slow), {});
      await jest.advanceTimersByTimeAsync(1200);
      await expect(running).resolves.toEqual({ success: true });
      expect(beats).toEqual([]);
    } finally {
      jest.useRealTimers();
    }
  });

  test('a real read_file activity heartbeats before it returns', async () => {
    const { env, beats } = mockEnv();
    const result = await runIn(env, TOOL_ACTIVITIES.read_file, { file_path: '{bundle-root}/notes.txt' });
    expect(result).toMatchObject({ success: true, content: 'héllo wörld\n' });
    expect(beats.length).toBeGreaterThanOrEqual(1);
  });

  test('the timer stops when the tool throws, and the error passes through unchanged', async () => {
    const { env, beats } = mockEnv();
    const boom = new Error('disk on fire');
    const failing: ToolFunction = async () => {
      await sleep(50);
      throw boom;
    };
    await expect(runIn(env, toToolActivity('read_file', failing, { heartbeatIntervalMs: 10 }), {})).rejects.toBe(boom);
    const count = beats.length;
    expect(count).toBeGreaterThanOrEqual(2);
    await sleep(100);
    expect(beats.length).toBe(count);
  });

  test('a shorter heartbeat timeout makes it beat more often (half the timeout)', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 100 }, { logger: new DefaultLogger('ERROR', () => undefined) });
    let beats = 0;
    env.on('heartbeat', () => (beats += 1));
    const slow: ToolFunction = async () => {
      await sleep(320);
      return { success: true };
    };
    await env.run(toToolActivity('read_file', slow), fx.ctx, {});
    expect(beats).toBeGreaterThanOrEqual(5);
  });
});

describe('tool activities: cancellation', () => {
  test('read_file on a FIFO is refused at once: nothing is left blocked in the kernel', async () => {
    const fifo = path.join(fx.bundle, 'stuck.fifo');
    execFileSync('mkfifo', [fifo]);
    const { env } = mockEnv();
    const started = Date.now();
    await expect(runIn(env, TOOL_ACTIVITIES.read_file, { file_path: fifo })).resolves.toEqual({
      success: false,
      error: `Not a regular file: ${fifo} is a FIFO; only regular files can be read`,
      path: fifo,
    });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  test('cancelling while a tool is stuck (it ignores its signal) rejects with a CancelledFailure at once', async () => {
    jest.useFakeTimers();
    try {
      const { env, beats } = mockEnv();
      // Like a read stuck in the kernel on a hung mount: it never settles and cannot be aborted.
      const stuck: ToolFunction = () => new Promise<ToolResult>(() => undefined);
      const running = runIn(env, toToolActivity('read_file', stuck), {});
      let outcome: unknown = 'pending';
      void running.then(
        () => (outcome = 'resolved'),
        (error: unknown) => (outcome = error),
      );
      await jest.advanceTimersByTimeAsync(300);
      expect(outcome).toBe('pending');
      expect(beats.length).toBeGreaterThanOrEqual(1);

      // Cancelled: it rejects without the clock moving on at all.
      env.cancel();
      await jest.advanceTimersByTimeAsync(0);
      expect(outcome).toBeInstanceOf(CancelledFailure);
      expect((outcome as CancelledFailure).message).toBe('CANCELLED');

      // The heartbeat timer stopped with the activity.
      const count = beats.length;
      await jest.advanceTimersByTimeAsync(5000);
      expect(beats.length).toBe(count);
    } finally {
      jest.useRealTimers();
    }
  });

  test('a tool that never settles still ends at once on cancellation (CancelledFailure, not its AbortError)', async () => {
    const { env } = mockEnv();
    let sawSignal: AbortSignal | undefined;
    const hanging: ToolFunction = (_ctx, _args, options) => {
      sawSignal = options?.signal;
      return new Promise<ToolResult>((_resolve, reject) => {
        // Rejects from inside the abort listener, i.e. before the SDK's `cancelled` promise does.
        options?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      });
    };
    const running = runIn(env, toToolActivity('execute_workflow', hanging), {});
    await sleep(20);
    env.cancel();
    await expect(running).rejects.toBeInstanceOf(CancelledFailure);
    expect(sawSignal?.aborted).toBe(true);
  });

  test('an activity already cancelled does not start the tool', async () => {
    const { env } = mockEnv();
    env.cancel();
    const tool = jest.fn<ReturnType<ToolFunction>, Parameters<ToolFunction>>(async () => ({ success: true }));
    await expect(runIn(env, toToolActivity('read_file', tool), {})).rejects.toBeInstanceOf(CancelledFailure);
    expect(tool).not.toHaveBeenCalled();
  });

  test('save_output: a cancelled activity writes nothing', async () => {
    const { env } = mockEnv();
    env.cancel();
    const args = { file_path: '{output_folder}/sub/doc.md', content: 'never' };
    await expect(runIn(env, TOOL_ACTIVITIES.save_output, args)).rejects.toBeInstanceOf(CancelledFailure);
    expect(await listFiles(fx.output)).toEqual([]);
  });

  test('save_output: the tool itself starts no write once its signal is aborted', async () => {
    const controller = new AbortController();
    const reason = new CancelledFailure('CANCELLED');
    controller.abort(reason);
    const args = { file_path: '{output_folder}/sub/doc.md', content: 'never' };
    await expect(saveOutputTool(fx.ctx, args, { signal: controller.signal })).rejects.toBe(reason);
    expect(await listFiles(fx.output)).toEqual([]);
  });

  test('read_file: an aborted signal is thrown, not turned into a result', async () => {
    const controller = new AbortController();
    const reason = new CancelledFailure('CANCELLED');
    controller.abort(reason);
    await expect(readFileTool(fx.ctx, { file_path: '{bundle-root}/notes.txt' }, { signal: controller.signal })).rejects.toBe(reason);
  });
});

describe('tool activities: bounded results', () => {
  test('MAX_TOOL_RESULT_BYTES is one million bytes', () => {
    expect(MAX_TOOL_RESULT_BYTES).toBe(1_000_000);
  });

  test('a read whose result is over the limit becomes an error result naming sizes and what to do', async () => {
    await fs.writeFile(path.join(fx.bundle, 'big.txt'), 'a'.repeat(MAX_TOOL_RESULT_BYTES));
    const args = { file_path: '{bundle-root}/big.txt' };
    const plain = await readFileTool(fx.ctx, args);
    expect(plain.success).toBe(true);
    const bytes = encodedToolResultBytes(plain);
    expect(bytes).toBeGreaterThan(MAX_TOOL_RESULT_BYTES);

    const { env } = mockEnv();
    await expect(runIn(env, TOOL_ACTIVITIES.read_file, args)).resolves.toEqual({
      success: false,
      error: `The result of read_file is ${bytes} bytes, over the limit of ${MAX_TOOL_RESULT_BYTES} bytes for one tool result; ask for a smaller file or part`,
    });
  });

  test('the limit counts the double JSON encoding: 400 KB of quotes is too much', async () => {
    // Each " becomes \" in the tool message and \\\" in the payload: four bytes per byte of file.
    await fs.writeFile(path.join(fx.bundle, 'quotes.txt'), '"'.repeat(400_000));
    const { env } = mockEnv();
    const result = await runIn(env, TOOL_ACTIVITIES.read_file, { file_path: '{bundle-root}/quotes.txt' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^The result of read_file is 16\d{5} bytes, over the limit of 1000000 bytes/);
  });

  test('the limit also applies outside an activity', async () => {
    await fs.writeFile(path.join(fx.bundle, 'big.txt'), 'a'.repeat(MAX_TOOL_RESULT_BYTES));
    const result = await TOOL_ACTIVITIES.read_file(fx.ctx, { file_path: '{bundle-root}/big.txt' });
    expect(result).toMatchObject({ success: false, error: expect.stringContaining('over the limit of 1000000 bytes') });
  });

  test('boundToolResult: a result of exactly the limit passes, one byte more does not', () => {
    const result: ToolResult = { success: true, content: 'x'.repeat(100) };
    const bytes = encodedToolResultBytes(result);
    expect(bytes).toBe(Buffer.byteLength(JSON.stringify(JSON.stringify(result))));
    expect(boundToolResult('read_file', result, bytes)).toBe(result);
    expect(boundToolResult('read_file', result, bytes - 1)).toEqual({
      success: false,
      error: `The result of read_file is ${bytes} bytes, over the limit of ${bytes - 1} bytes for one tool result; ask for a smaller file or part`,
    });
  });
});

describe('tool activities: unchanged results', () => {
  test('a normal read gives exactly what the plain tool gives, in and out of an activity', async () => {
    const args = { file_path: '{bundle-root}/notes.txt' };
    const plain = await readFileTool(fx.ctx, args);
    expect(plain).toEqual({ success: true, path: path.join(fx.bundle, 'notes.txt'), content: 'héllo wörld\n', size: Buffer.byteLength('héllo wörld\n') });
    const { env } = mockEnv();
    await expect(runIn(env, TOOL_ACTIVITIES.read_file, args)).resolves.toEqual(plain);
    await expect(TOOL_ACTIVITIES.read_file(fx.ctx, args)).resolves.toEqual(plain);
  });

  test('expected failures stay results; every tool has an activity under the same name', async () => {
    const { env } = mockEnv();
    await expect(runIn(env, TOOL_ACTIVITIES.read_file, { file_path: '{bundle-root}/missing.txt' })).resolves.toMatchObject({
      success: false,
      error: expect.stringContaining('missing.txt'),
    });
    const saved = await runIn(env, TOOL_ACTIVITIES.save_output, { file_path: '{output_folder}/x.md', content: 'abc' });
    expect(saved).toEqual({ success: true, path: path.join(fx.output, 'x.md'), size: 3 });
    const wf = await runIn(env, TOOL_ACTIVITIES.execute_workflow, { workflow_path: '{bundle-root}/workflows/plain/workflow.yaml' });
    expect(wf).toMatchObject({ success: true, workflow_name: 'plain' });
    expect(Object.keys(TOOL_ACTIVITIES)).toEqual(Object.keys(TOOLS));
  });
});
