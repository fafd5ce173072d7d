/**
 * What a delegated task costs: turns of K tasks (zero-latency fake model), each task being one model
 * call that answers it, done either by a child session (`delegate_task`: the parent's call asking
 * for it, then the child's own session: initialisation, tool listing, its one model call) or in the
 * parent itself (the parent's call asking for a `read_file` of a small file, then the call that
 * answers, which asks for the next one). Both paths make 2K + 1 model calls per turn; the
 * difference is the child session (its workflow start and end, its activities, its workflow tasks)
 * against two small local activities. The same tasks done by subagents (`run_subagent`, whose
 * child reads its instructions from a file of the project first): one after the other, as the
 * delegated path, and all K in one reply, where they run at once (K + 2 model calls). Also the
 * history each path leaves: the parent's, plus every child's. One worker in this process on the
 * bench's dev server; a fresh session per turn.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LoopwrightClient, type SessionHandle } from '../../client/session-client';
import type { ChatMessage } from '../../common/messages';
import { startFakeOpenAI, text, toolCalls, type Responder } from '../../fake-model/server';
import { createWorker } from '../../worker/create-worker';
import { findLastIndex } from './bench-responder';
import type { BenchServer } from './bench-server';
import type { CleanupStack } from './cleanup-stack';
import { benchWorkflowBundle, waitUntilReady, withTimeout } from './durable-loop';
import { measureHistory } from './history-size';
import { median, summarize, type SampleSummary } from './stats';
import { ms, textTable } from './text-table';

const PATTERN = /^delegation bench: mode=(delegate|inline|subagent|parallel) tasks=(\d+)$/;

type Mode = 'delegate' | 'inline' | 'subagent' | 'parallel';
const MODES: readonly Mode[] = ['delegate', 'inline', 'subagent', 'parallel'];
/** The id of the k-th task's call (1-based) in each mode that starts children. */
const CALL_PREFIX: Record<Mode, string> = { delegate: 'd', inline: 'r', subagent: 's', parallel: 'p' };
const TASK = /^bench task (\d+)$/;

/**
 * Stateless script: a child (its user message is `bench task k`) answers at once; a parent asks for
 * one task per model call (by delegation, or a `read_file` and an answering call in inline mode).
 */
export const delegationResponder: Responder = (request) => {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const lastUser = findLastIndex(messages, (m) => m.role === 'user');
  const said = lastUser >= 0 ? String(messages[lastUser]!.content) : '';
  const task = TASK.exec(said);
  if (task) return text(`task ${task[1]} done`);
  const match = PATTERN.exec(said);
  if (!match) return text('delegation bench responder: no bench message found');
  const calls = messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
  const tasks = Number(match[2]);
  const subagent = (id: string, k: number) => ({ id, name: 'run_subagent', arguments: { instructions_file: '{project-root}/helper.md', task: `bench task ${k}` } });
  if (match[1] === 'delegate') {
    if (calls >= tasks) return text('all tasks done');
    return toolCalls([{ id: `d${calls + 1}`, name: 'delegate_task', arguments: { agent: 'worker', task: `bench task ${calls + 1}` } }]);
  }
  if (match[1] === 'subagent') return calls >= tasks ? text('all tasks done') : toolCalls([subagent(`s${calls + 1}`, calls + 1)]);
  if (match[1] === 'parallel') return calls >= 1 ? text('all tasks done') : toolCalls(Array.from({ length: tasks }, (_, i) => subagent(`p${i + 1}`, i + 1)));
  if (calls >= 2 * tasks) return text('all tasks done');
  return toolCalls([{ id: `r${calls + 1}`, name: 'read_file', arguments: { file_path: '{bundle-root}/notes.md' } }]);
};

/** One path's turns. */
export interface DelegationPath {
  turn: SampleSummary;
  /** Protobuf bytes and events of the last timed turn's histories: the parent's, and (delegated) its children's. */
  parentBytes: number;
  parentEvents: number;
  childBytes: number;
  childEvents: number;
}

export interface DelegationFigures {
  tasks: number;
  runs: number;
  warmup: number;
  delegated: DelegationPath;
  inline: DelegationPath;
  /** Subagents (run_subagent), one after the other. */
  subagent: DelegationPath;
  /** Subagents, all in one reply (they run at once). */
  parallel: DelegationPath;
  /** (median subagent turn - median inline turn) / tasks. */
  subagentOverheadPerTask: number;
  /** (median delegated turn - median inline turn) / tasks. */
  overheadPerTask: number;
  /** Median of the round-by-round differences, per task. */
  pairedOverheadPerTask: number;
  /** (delegated parent + children bytes - inline bytes) / tasks. */
  historyBytesPerTask: number;
}

export interface DelegationBenchOptions {
  server: BenchServer;
  model: string;
  turnTimeoutMs: number;
  tasks?: number;
  runs?: number;
  warmup?: number;
  progress?: (line: string) => void;
}

const AGENT = (id: string, name: string) => `\`\`\`xml
<agent id="${id}" name="${name}" title="${name}">
  <persona><role>Bench agent</role><identity>Fast</identity><communication_style>Brief</communication_style><principles>Answer.</principles></persona>
  <cmds><c cmd="*help">Help</c><c cmd="*exit">Exit</c></cmds>
</agent>
\`\`\`
`;

/**
 * A two-agent bundle (`lead`, `worker`) in a temp folder, with a skill (so `run_subagent` is offered)
 * and a subagent's instructions file.
 */
function writeBundle(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-bench-delegation-'));
  fs.mkdirSync(path.join(root, 'agents'));
  fs.writeFileSync(path.join(root, 'config.yaml'), 'user_name: Bench\noutput_folder: "{project-root}/out"\n');
  fs.writeFileSync(path.join(root, 'notes.md'), 'A small file.\n');
  fs.writeFileSync(path.join(root, 'agents/lead.md'), AGENT('lead', 'Lead'));
  fs.writeFileSync(path.join(root, 'agents/worker.md'), AGENT('worker', 'Worker'));
  fs.mkdirSync(path.join(root, '.agents/skills/bench-notes'), { recursive: true });
  fs.writeFileSync(path.join(root, '.agents/skills/bench-notes/SKILL.md'), '---\nname: bench-notes\ndescription: Take notes. Use when asked for notes.\n---\nWrite notes.\n');
  fs.writeFileSync(path.join(root, 'helper.md'), '---\nname: helper\n---\nYou answer one bench task briefly.\n');
  return root;
}

export async function measureDelegation(options: DelegationBenchOptions, cleanup: CleanupStack): Promise<DelegationFigures> {
  const tasks = options.tasks ?? 5;
  const runs = options.runs ?? 5;
  const warmup = options.warmup ?? 1;
  const bundle = writeBundle();
  cleanup.push('delegation bundle', () => fs.rmSync(bundle, { recursive: true, force: true }));
  const fake = await startFakeOpenAI({ responder: delegationResponder });
  cleanup.push('delegation fake model server', () => fake.close());
  const taskQueue = `loopwright-bench-delegation-${process.pid}`;
  const [workflowBundle, connection] = await Promise.all([benchWorkflowBundle(), options.server.nativeConnection()]);
  const worker = await createWorker({ connection, taskQueue, workflowBundle, activityOptions: { model: { baseURL: fake.baseURL, apiKey: 'bench-key', defaultModel: options.model } } });
  const running = worker.run();
  const stopWorker = async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  };
  cleanup.push('delegation worker', stopWorker);
  const loopwright = new LoopwrightClient(options.server.client, taskQueue);

  const turn = async (mode: Mode) => {
    const session = await loopwright.start({ bundlePath: bundle, agentId: 'lead', projectRoot: bundle, maxIterations: 4 * tasks + 2 });
    await waitUntilReady(session, options.turnTimeoutMs);
    const started = performance.now();
    const result = await withTimeout(session.send(`delegation bench: mode=${mode} tasks=${tasks}`), options.turnTimeoutMs, `delegation bench turn (${mode})`);
    const elapsed = performance.now() - started;
    if (!result.success || result.response !== 'all tasks done' || (mode !== 'inline' && result.delegations !== tasks)) {
      throw new Error(`delegation bench turn (${mode}) did not do its ${tasks} tasks: ${result.status}, ${result.delegations ?? 0} delegations: ${result.response ?? result.error ?? ''}`);
    }
    return { ms: elapsed, session };
  };
  const histories = async (session: SessionHandle, mode: Mode) => {
    const parent = measureHistory(await session.workflow.fetchHistory());
    let childBytes = 0;
    let childEvents = 0;
    if (mode !== 'inline') {
      for (let k = 1; k <= tasks; k++) {
        const iteration = mode === 'parallel' ? 1 : k;
        const child = measureHistory(await loopwright.client.workflow.getHandle(`${session.workflow.workflowId}-t1-i${iteration}-${CALL_PREFIX[mode]}${k}`).fetchHistory());
        childBytes += child.protoBytes;
        childEvents += child.events;
      }
    }
    return { parentBytes: parent.protoBytes, parentEvents: parent.events, childBytes, childEvents };
  };
  const finish = async (session: SessionHandle) => {
    await session.end();
    await withTimeout(session.result(), options.turnTimeoutMs, 'session end');
  };

  const modes = MODES;
  options.progress?.(`delegation: ${warmup} warm-up and ${runs} timed turns of ${tasks} tasks each, delegated, inline and by subagents, in rotating order`);
  for (let i = 0; i < warmup; i++) for (const mode of modes) await finish((await turn(mode)).session);
  const samples: Record<Mode, number[]> = { delegate: [], inline: [], subagent: [], parallel: [] };
  const sizes: Record<string, Awaited<ReturnType<typeof histories>>> = {};
  for (let i = 0; i < runs; i++) {
    for (const mode of i % 2 === 0 ? modes : [...modes].reverse()) {
      const { ms: elapsed, session } = await turn(mode);
      samples[mode].push(elapsed);
      if (i === runs - 1) sizes[mode] = await histories(session, mode);
      await finish(session);
    }
  }
  await stopWorker();
  await fake.close();
  const delegated = { turn: summarize(samples.delegate), ...sizes.delegate! };
  const inline = { turn: summarize(samples.inline), ...sizes.inline! };
  const subagent = { turn: summarize(samples.subagent), ...sizes.subagent! };
  const parallel = { turn: summarize(samples.parallel), ...sizes.parallel! };
  const paired = samples.delegate.map((d, i) => d - samples.inline[i]!);
  return {
    tasks,
    runs,
    warmup,
    delegated,
    inline,
    subagent,
    parallel,
    subagentOverheadPerTask: (subagent.turn.median - inline.turn.median) / tasks,
    overheadPerTask: (delegated.turn.median - inline.turn.median) / tasks,
    pairedOverheadPerTask: median(paired) / tasks,
    historyBytesPerTask: (delegated.parentBytes + delegated.childBytes - inline.parentBytes) / tasks,
  };
}

export function formatDelegation(f: DelegationFigures): string {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  const row = (label: string, p: DelegationPath) => [
    label,
    `${ms(p.turn.median, 1)} (${ms(p.turn.min, 1)}..${ms(p.turn.max, 1)})`,
    ms(p.turn.median / f.tasks, 1),
    `${kb(p.parentBytes)} / ${p.parentEvents}`,
    `${kb(p.childBytes)} / ${p.childEvents}`,
  ];
  return [
    `9. Delegation: turns of ${f.tasks} tasks, each one model call that answers it, done by a child session (delegate_task) or in the parent` +
      ` (a read_file call, then the answering call); ${2 * f.tasks + 1} model calls per turn either way; zero-latency fake model; medians of ${f.runs} turns after ${f.warmup} warm-up`,
    textTable(
      ['path', 'turn ms median (min..max)', 'ms/task', 'parent history / events', 'children history / events'],
      [row('delegated (child sessions)', f.delegated), row('inline (in the parent)', f.inline), row('subagents, one after another', f.subagent), row(`subagents, ${f.tasks} in one reply`, f.parallel)],
    ),
    `   Overhead of a child session: ${ms(f.overheadPerTask, 1)} ms per task (${ms(f.pairedOverheadPerTask, 1)} ms as the median of round-by-round differences);` +
      ` history ${kb(f.historyBytesPerTask)} more per task, parent and child together.`,
    `   Overhead of a subagent (run_subagent, instructions read from a file): ${ms(f.subagentOverheadPerTask, 1)} ms per task against the same work inline;` +
      ` ${f.tasks} subagents in one reply take ${ms(f.parallel.turn.median, 1)} ms against ${ms(f.subagent.turn.median, 1)} ms one after another.`,
  ].join('\n');
}
