/**
 * What an MCP tool call costs inside a durable session, against a custom tool that does the same:
 * turns of N model calls (zero-latency fake model) where every call but the last asks for one tool,
 * either `echo` (a `defineTool` function in this process; a read, so it runs as a local activity)
 * or `everything__echo` (server-everything over stdio, through the `callMcpTool` activity and the
 * worker's MCP pool, a normal activity). A third tool, `echo_activity`, is the same function
 * declared a write, which runs as a normal activity: it tells the local-activity difference apart
 * from the MCP one. One Loopwright worker in this process on the bench's dev server; a fresh
 * session per turn, every session started alike (the same MCP server and tools offered), so the
 * paths differ only in the tool the model calls. Turns rotate through the tools.
 */
import path from 'node:path';
import { z } from 'zod';
import type { History } from '@temporalio/common/lib/proto-utils';
import { closeDefaultMcpPool } from '../../activities/mcp/default-pool';
import { defineTool } from '../../activities/tools/custom-tool';
import { LoopwrightClient, type SessionHandle } from '../../client/session-client';
import type { ChatMessage } from '../../common/messages';
import { startFakeOpenAI, text, toolCalls, type Responder } from '../../fake-model/server';
import { createWorker } from '../../worker/create-worker';
import { findLastIndex } from './bench-responder';
import type { BenchServer } from './bench-server';
import type { CleanupStack } from './cleanup-stack';
import { benchWorkflowBundle, waitUntilReady, withTimeout } from './durable-loop';
import type { McpBenchFigures } from './mcp';
import { median, summarize, type SampleSummary } from './stats';
import { ms, textTable } from './text-table';

/** The tools the turns call: custom (local activity), custom (normal activity), MCP. */
export const CUSTOM_TOOL = 'echo';
export const CUSTOM_ACTIVITY_TOOL = 'echo_activity';
export const MCP_TOOL = 'everything__echo';
/** Each tool, and the activity type its calls are scheduled as in history (when not local). */
const TOOLS: [string, string][] = [
  [CUSTOM_TOOL, CUSTOM_TOOL],
  [CUSTOM_ACTIVITY_TOOL, CUSTOM_ACTIVITY_TOOL],
  [MCP_TOOL, 'callMcpTool'],
];
const ECHO_MESSAGE = 'ping';

const EVERYTHING_ENTRY = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** The user message that asks for a turn of `iterations` model calls, all but the last calling `tool`. */
export function mcpBenchMessage(iterations: number, tool: string): string {
  return `mcp bench: iterations=${iterations} tool=${tool}`;
}

const MESSAGE_PATTERN = /^mcp bench: iterations=(\d+) tool=(\S+)$/;

/**
 * The scripted model: a call of the named tool with `{"message":"ping"}` until the turn's N-th
 * model call, which gets a text. Stateless (it counts the assistant messages since the user's).
 * A tool result that is not a successful echo of the message ends the turn at once, with the
 * result in the text, so a failing tool can never pass for a fast one.
 */
export const mcpBenchResponder: Responder = (request) => {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const lastUser = findLastIndex(messages, (m) => m.role === 'user');
  const match = lastUser >= 0 ? MESSAGE_PATTERN.exec(String(messages[lastUser]!.content)) : null;
  if (!match) return text('mcp bench responder: no bench message found');
  const since = messages.slice(lastUser + 1);
  const last = since[since.length - 1];
  if (last?.role === 'tool' && !echoed(String(last.content))) return text(`tool failed: ${String(last.content).slice(0, 500)}`);
  const call = since.filter((m) => m.role === 'assistant').length + 1;
  if (call >= Number(match[1])) return text(`done after ${call} model calls`);
  return toolCalls([{ name: match[2]!, arguments: { message: ECHO_MESSAGE } }]);
};

/**
 * A tool message holding a successful result whose content carries the message (`ping`, `Echo: ping`).
 * The result is the message's first line: the loop may append a note (iterations left) after it.
 */
function echoed(content: string): boolean {
  try {
    const result = JSON.parse(content.split('\n', 1)[0]!) as { success?: unknown; content?: unknown };
    return result.success === true && typeof result.content === 'string' && result.content.includes(ECHO_MESSAGE);
  } catch {
    return false;
  }
}

/** One path's turns. */
export interface McpSessionPath {
  tool: string;
  /** Milliseconds per turn, from sending the message until the turn's result. */
  turn: SampleSummary;
  /** Median turn / iterations. */
  perIteration: number;
  /** How the last timed turn's session ran the tool, from its history. */
  ranAs: { activityTasks: number; localActivityMarkers: number };
}

/** The in-session part of the MCP figures. */
export interface McpSessionFigures {
  iterations: number;
  /** Tool calls per turn (every model call but the last). */
  toolCalls: number;
  runs: number;
  warmup: number;
  /** `echo`: custom, a read, run as a local activity. */
  custom: McpSessionPath;
  /** `echo_activity`: the same function declared a write, run as a normal activity. */
  customActivity: McpSessionPath;
  /** `everything__echo`: MCP, through `callMcpTool` (a normal activity) and the pool. */
  mcp: McpSessionPath;
  /** (median MCP turn - median `echo` turn) / tool calls: the MCP overhead per call against the custom tool. */
  overheadPerCall: number;
  /** Same difference / iterations. */
  overheadPerIteration: number;
  /** Median of the paired differences (MCP turn - `echo` turn of the same round), per call. */
  pairedOverheadPerCall: number;
  /** (median MCP turn - median `echo_activity` turn) / tool calls: MCP against a custom tool that is also a normal activity. */
  overheadOverActivityPerCall: number;
}

export interface McpSessionOptions {
  server: BenchServer;
  bundlePath: string;
  agentId: string;
  model: string;
  turnTimeoutMs: number;
  iterations?: number;
  runs?: number;
  warmup?: number;
  progress?: (line: string) => void;
}

/** Runs the turns; the fake model, the worker and the MCP pool are stopped on `cleanup` (and, when all went well, at the end). */
export async function measureMcpSession(options: McpSessionOptions, cleanup: CleanupStack): Promise<McpSessionFigures> {
  const iterations = options.iterations ?? 20;
  const runs = options.runs ?? 5;
  const warmup = options.warmup ?? 1;
  const fake = await startFakeOpenAI({ responder: mcpBenchResponder });
  cleanup.push('mcp fake model server', () => fake.close());
  options.progress?.('mcp: starting a Loopwright worker with two custom echo tools in this process');
  const echo = (name: string, access: 'read' | 'write') =>
    defineTool({ name, description: 'Returns the message it is given', parameters: z.object({ message: z.string() }), access, target: 'message', run: ({ message }) => message });
  const taskQueue = `loopwright-bench-mcp-${process.pid}`;
  const [workflowBundle, connection] = await Promise.all([benchWorkflowBundle(), options.server.nativeConnection()]);
  const worker = await createWorker({
    connection,
    taskQueue,
    workflowBundle,
    tools: [echo(CUSTOM_TOOL, 'read'), echo(CUSTOM_ACTIVITY_TOOL, 'write')],
    activityOptions: { model: { baseURL: fake.baseURL, apiKey: 'bench-key', defaultModel: options.model } },
  });
  // Pushed first, so it runs after the worker has stopped: the worker's pool holds server-everything.
  cleanup.push('mcp pool', () => closeDefaultMcpPool());
  const running = worker.run();
  const stopWorker = async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  };
  cleanup.push('mcp worker', stopWorker);
  const loopwright = new LoopwrightClient(options.server.client, taskQueue);

  const turn = async (tool: string) => {
    const session = await loopwright.start({
      bundlePath: options.bundlePath,
      agentId: options.agentId,
      maxIterations: iterations,
      context: { window: 10_000_000 },
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'] } },
      allowTools: ['everything__*'],
    });
    await waitUntilReady(session, options.turnTimeoutMs);
    const started = performance.now();
    const result = await withTimeout(session.send(mcpBenchMessage(iterations, tool)), options.turnTimeoutMs, `mcp bench turn (${tool})`);
    const elapsed = performance.now() - started;
    if (!result.success || result.iterations !== iterations || !result.response?.startsWith('done')) {
      throw new Error(`mcp bench turn (${tool}) did not make ${iterations} model calls: ${result.iterations} iterations, ${result.status}: ${result.response ?? result.error ?? ''}`);
    }
    return { ms: elapsed, session };
  };
  const finish = async (session: SessionHandle) => {
    await session.end();
    await withTimeout(session.result(), options.turnTimeoutMs, 'session end');
  };

  const names = TOOLS.map(([tool]) => tool);
  options.progress?.(`mcp: ${warmup} warm-up and ${runs} timed ${iterations}-iteration turns each, ${names.join(', ')}, in rotating order`);
  for (let i = 0; i < warmup; i++) {
    for (const tool of names) await finish((await turn(tool)).session);
  }
  const samples: Record<string, number[]> = Object.fromEntries(names.map((tool) => [tool, []]));
  const histories: Record<string, History> = {};
  for (let i = 0; i < runs; i++) {
    // Rotate which goes first, so none always runs after the same other one.
    const order = names.map((_, k) => names[(i + k) % names.length]!);
    for (const tool of order) {
      const { ms: elapsed, session } = await turn(tool);
      samples[tool]!.push(elapsed);
      if (i === runs - 1) histories[tool] = await session.workflow.fetchHistory();
      await finish(session);
    }
  }
  await stopWorker();
  await closeDefaultMcpPool();
  await fake.close();

  const toolCallsPerTurn = iterations - 1;
  const pathOf = (tool: string, activityType: string): McpSessionPath => {
    const turnMs = summarize(samples[tool]!);
    return { tool, turn: turnMs, perIteration: turnMs.median / iterations, ranAs: ranAs(histories[tool], activityType) };
  };
  const [custom, customActivity, mcp] = TOOLS.map(([tool, activityType]) => pathOf(tool, activityType)) as [McpSessionPath, McpSessionPath, McpSessionPath];
  const difference = mcp.turn.median - custom.turn.median;
  const paired = samples[MCP_TOOL]!.map((m, i) => m - samples[CUSTOM_TOOL]![i]!);
  return {
    iterations,
    toolCalls: toolCallsPerTurn,
    runs,
    warmup,
    custom,
    customActivity,
    mcp,
    overheadPerCall: difference / toolCallsPerTurn,
    overheadPerIteration: difference / iterations,
    pairedOverheadPerCall: median(paired) / toolCallsPerTurn,
    overheadOverActivityPerCall: (mcp.turn.median - customActivity.turn.median) / toolCallsPerTurn,
  };
}

/** Activity tasks of `activityType` and local-activity markers in a session's history. */
function ranAs(history: History | undefined, activityType: string): McpSessionPath['ranAs'] {
  let activityTasks = 0;
  let localActivityMarkers = 0;
  for (const event of history?.events ?? []) {
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === activityType) activityTasks++;
    if (event.markerRecordedEventAttributes?.markerName === 'core_local_activity') localActivityMarkers++;
  }
  return { activityTasks, localActivityMarkers };
}

/** The in-session figures as a table, with the pool-vs-SDK figures (`pool`) in the summary line when there are any. */
export function formatMcpSession(f: McpSessionFigures, pool?: McpBenchFigures): string {
  const row = (p: McpSessionPath, label: string, runsAs: string, vsMcp: string) => [
    label,
    runsAs,
    `${p.ranAs.activityTasks} / ${p.ranAs.localActivityMarkers}`,
    `${ms(p.turn.median, 1)} (${ms(p.turn.min, 1)}..${ms(p.turn.max, 1)})`,
    ms(p.perIteration, 2),
    vsMcp,
  ];
  const direct = pool ? `; direct SDK call ${ms(pool.direct.median, 3)} ms, pool ${ms(pool.pooled.median, 3)} ms (outside a session, above)` : '';
  return [
    `   MCP tool call inside a session: ${f.iterations}-iteration turns (${f.toolCalls} tool calls + ${f.iterations} model calls, zero-latency fake model),` +
      ` a fresh session per turn, worker in this process; medians of ${f.runs} turns each after ${f.warmup} warm-up, in rotating order`,
    textTable(
      ['tool', 'runs as', 'activity tasks / LA markers*', 'turn ms median (min..max)', 'ms/iteration', 'MCP overhead ms/call**'],
      [
        row(f.custom, `${f.custom.tool} (custom, read)`, 'local activity', ms(f.overheadPerCall, 2)),
        row(f.customActivity, `${f.customActivity.tool} (same function, declared a write)`, 'activity', ms(f.overheadOverActivityPerCall, 2)),
        row(f.mcp, `${f.mcp.tool} (server-everything, stdio)`, 'activity callMcpTool -> McpPool', ''),
      ],
    ),
    `   *  activity tasks of the tool and local-activity markers in the history of the last timed session of each (initialisation included).` +
      ` A custom read runs as a local activity (no activity task, no round trip through the server) while every MCP call is a normal activity.`,
    `   ** (median MCP turn - median turn of that row) / ${f.toolCalls} calls; against echo also ${ms(f.overheadPerIteration, 2)} ms per iteration,` +
      ` and ${ms(f.pairedOverheadPerCall, 2)} ms per call as the median of the differences round by round.`,
    `   Summary: custom tool ${ms(f.custom.perIteration, 2)} ms/iteration, MCP tool ${ms(f.mcp.perIteration, 2)} ms/iteration,` +
      ` MCP overhead ${ms(f.overheadPerCall, 2)} ms per call (${ms(f.overheadOverActivityPerCall, 2)} ms against a custom tool run as a normal activity)${direct}.`,
  ].join('\n');
}
