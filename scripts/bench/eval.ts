/**
 * What an eval costs per recorded turn against running the turn live (zero-latency fake model, a
 * worker in this process on the bench's dev server). Each round records a session live — T turns,
 * each a `read_file` of a small file, a `save_output` and an answer (three model calls) — timing
 * each `send`; then replays it with `agentEval` against the same responder (so every read is
 * answered from the recording, every write runs in the scratch copy), timing the whole eval. Per
 * recorded turn: the eval's wall time over T (its fixed cost per case included: the recording read
 * and copied, the scratch copy, the session's start and end, both histories read and scored), and
 * the candidate's own turn latency from its history beside the recording's. Rounds after a warm-up;
 * medians.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LoopwrightClient } from '../../client/session-client';
import { startEval } from '../../client/eval-client';
import type { ChatMessage } from '../../common/messages';
import { startFakeOpenAI, text, toolCalls, type Responder } from '../../fake-model/server';
import { createWorker } from '../../worker/create-worker';
import type { BenchServer } from './bench-server';
import type { CleanupStack } from './cleanup-stack';
import { benchWorkflowBundle, waitUntilReady, withTimeout } from './durable-loop';
import { median, summarize, type SampleSummary } from './stats';
import { ms, textTable } from './text-table';

/** Each turn: read the small file, save a note named after the turn's message, answer. */
export const evalResponder: Responder = (request) => {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const last = messages.map((m) => m.role).lastIndexOf('user');
  const said = String(messages[last]?.content ?? '');
  const step = messages.slice(last).filter((m) => m.role === 'assistant').length;
  if (step === 0) return toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/notes.md' } }]);
  if (step === 1) return toolCalls([{ name: 'save_output', arguments: { file_path: `{output_folder}/${said.replace(/\W+/g, '-')}.md`, content: `# ${said}\n` } }]);
  return text(`done: ${said}`);
};

export interface EvalFigures {
  turns: number;
  rounds: number;
  warmup: number;
  /** A live turn, `send` to its result, as the client sees it. */
  liveTurn: SampleSummary;
  /** A whole eval of one recording, start to summary. */
  evalWall: SampleSummary;
  /** The eval's wall time over the recorded turns. */
  evalPerTurn: number;
  /** Turn latency from history (first model call to the turn's end): the recording's and the candidate's. */
  recordedTurnLatency: number;
  candidateTurnLatency: number;
  /** The eval's wall time less the candidate's turns: its fixed cost per recording. */
  fixedPerRecording: number;
  /** Reads answered from the recording, and writes run, per round (all rounds alike). */
  answered: number;
  ran: number;
}

export interface EvalBenchOptions {
  server: BenchServer;
  model: string;
  turnTimeoutMs: number;
  turns?: number;
  rounds?: number;
  warmup?: number;
  progress?: (line: string) => void;
}

const AGENT = `\`\`\`xml
<agent id="noter" name="Noter" title="Noter">
  <persona><role>Bench agent</role><identity>Fast</identity><communication_style>Brief</communication_style><principles>Answer.</principles></persona>
  <cmds><c cmd="*help">Help</c><c cmd="*exit">Exit</c></cmds>
</agent>
\`\`\`
`;

function writeBundle(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-bench-eval-'));
  fs.mkdirSync(path.join(root, 'agents'));
  fs.writeFileSync(path.join(root, 'config.yaml'), 'user_name: Bench\noutput_folder: "{project-root}/out"\n');
  fs.writeFileSync(path.join(root, 'notes.md'), 'A small file of notes.\n');
  fs.writeFileSync(path.join(root, 'agents/noter.md'), AGENT);
  return root;
}

export async function measureEval(options: EvalBenchOptions, cleanup: CleanupStack): Promise<EvalFigures> {
  const turns = options.turns ?? 10;
  const rounds = options.rounds ?? 5;
  const warmup = options.warmup ?? 1;
  const bundle = writeBundle();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-bench-eval-scratch-'));
  cleanup.push('eval bundle', () => {
    fs.rmSync(bundle, { recursive: true, force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  });
  const fake = await startFakeOpenAI({ responder: evalResponder });
  cleanup.push('eval fake model server', () => fake.close());
  const taskQueue = `loopwright-bench-eval-${process.pid}`;
  const [workflowBundle, connection] = await Promise.all([benchWorkflowBundle(), options.server.nativeConnection()]);
  const worker = await createWorker({ connection, taskQueue, workflowBundle, activityOptions: { model: { baseURL: fake.baseURL, apiKey: 'bench-key', defaultModel: options.model } } });
  const running = worker.run();
  const stopWorker = async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  };
  cleanup.push('eval worker', stopWorker);
  const loopwright = new LoopwrightClient(options.server.client, taskQueue);

  const round = async (i: number) => {
    const session = await loopwright.start({ bundlePath: bundle, agentId: 'noter', projectRoot: bundle, workflowId: `bench-eval-rec-${process.pid}-${i}` });
    await waitUntilReady(session, options.turnTimeoutMs);
    const live: number[] = [];
    for (let t = 1; t <= turns; t++) {
      const started = performance.now();
      const result = await withTimeout(session.send(`note ${t}`), options.turnTimeoutMs, 'eval bench live turn');
      live.push(performance.now() - started);
      if (result.response !== `done: note ${t}`) throw new Error(`eval bench: live turn ${t} answered ${result.response ?? result.error ?? ''}`);
    }
    await session.end();
    await withTimeout(session.result(), options.turnTimeoutMs, 'session end');
    const started = performance.now();
    const evaluation = await startEval(loopwright, { sources: [session.workflowId], scratchRoot: path.join(scratch, String(i)), workflowId: `bench-eval-${process.pid}-${i}` });
    const summary = await withTimeout(evaluation.result(), options.turnTimeoutMs * turns, 'eval');
    const wall = performance.now() - started;
    const [c] = (await evaluation.report()).cases;
    if (!c || summary.scored !== 1 || c.error || !c.trajectory.same || c.statusChanged) throw new Error(`eval bench: the replay differs from its recording: ${JSON.stringify(c)}`);
    return { live, wall, recorded: c.baseline!.latencyMs!, candidate: c.candidate!.latencyMs!, answered: c.replay.answered, ran: c.replay.ran };
  };

  options.progress?.(`eval: ${warmup} warm-up and ${rounds} timed rounds, each a ${turns}-turn session recorded live and then replayed by an eval`);
  for (let i = 0; i < warmup; i++) await round(-1 - i);
  const results = [];
  for (let i = 0; i < rounds; i++) results.push(await round(i));
  await stopWorker();
  await fake.close();
  const wall = summarize(results.map((r) => r.wall));
  const candidate = median(results.map((r) => r.candidate / turns));
  return {
    turns,
    rounds,
    warmup,
    liveTurn: summarize(results.flatMap((r) => r.live)),
    evalWall: wall,
    evalPerTurn: wall.median / turns,
    recordedTurnLatency: median(results.map((r) => r.recorded / turns)),
    candidateTurnLatency: candidate,
    fixedPerRecording: median(results.map((r) => r.wall - r.candidate)),
    answered: results[0]!.answered,
    ran: results[0]!.ran,
  };
}

export function formatEval(f: EvalFigures): string {
  const range = (s: SampleSummary) => `${ms(s.median, 1)} (${ms(s.min, 1)}..${ms(s.max, 1)})`;
  return [
    `Eval: a ${f.turns}-turn session (each turn a read_file, a save_output and an answer: 3 model calls) recorded live, then replayed by an eval` +
      ` (reads answered from the recording, writes run in a scratch copy); zero-latency fake model; medians of ${f.rounds} rounds after ${f.warmup} warm-up`,
    textTable(
      ['figure', 'ms'],
      [
        ['live turn (send to result, client side), median (min..max)', range(f.liveTurn)],
        ['recorded turn, from history (first model call to the turn end)', ms(f.recordedTurnLatency, 1)],
        ['replayed turn, from history (the same span in the eval session)', ms(f.candidateTurnLatency, 1)],
        [`whole eval of the recording, median (min..max)`, range(f.evalWall)],
        ['eval per recorded turn (whole eval / turns)', ms(f.evalPerTurn, 1)],
        ['fixed cost per recording (whole eval less its turns)', ms(f.fixedPerRecording, 1)],
      ],
    ),
    `   Per round: ${f.answered} reads answered from the recording (no activity), ${f.ran} writes run in the scratch copy.`,
  ].join('\n');
}
