/**
 * Engine overhead: the same scripted turn through the durable loop (Temporal) and through the plain
 * in-process loop, per iteration, plus the history each durable turn leaves behind; and the bare
 * one-activity workflow loop of as many iterations, the floor any durable loop on this server has.
 */
import type OpenAI from 'openai';
import type { SystemMessage, ToolDefinition } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { bareFigures, type BareBench, type BareFigures, type BareRun } from './bare-loop';
import { benchTurnMessage } from './bench-responder';
import type { DurableBench } from './durable-loop';
import { measureHistory, type HistoryFigures } from './history-size';
import { measureTimeline, type TimelineFigures } from './history-timeline';
import { runPlainTurn } from './plain-loop';
import { median, summarize, type SampleSummary } from './stats';

/** What both loops need. */
export interface EngineBenchInput {
  durable: DurableBench;
  bare: BareBench;
  openai: OpenAI;
  model: string;
  systemMessages: SystemMessage[];
  tools: ToolDefinition[];
  context: RuntimeContext;
  /** CPU of the model server's process so far (ms), when it runs in a process of its own. */
  modelServerCpuMs?: () => number | undefined;
  /** Progress lines (to stderr). */
  progress(line: string): void;
}

/** CPU per iteration (ms) of one loop, over its timed turns. */
export interface CpuFigures {
  /** This process: the durable worker (activities and workflow thread) or the plain loop; the bench's client too. */
  process: number;
  /** The model server's process, when it runs apart (undefined otherwise: then it is in `process`). */
  modelServer?: number;
}

/** Timings of one turn shape, in milliseconds per whole turn. */
export interface OverheadFigures {
  iterations: number;
  file: string;
  runs: number;
  warmup: number;
  plainTurn: SampleSummary;
  durableTurn: SampleSummary;
  /** Medians per iteration (turn median / iterations). */
  plainPerIteration: number;
  durablePerIteration: number;
  overheadPerIteration: number;
  /** durable / plain per iteration. */
  ratio: number;
  /** The bare loop of as many iterations (one trivial activity each). */
  bare: BareFigures;
  /** durable / bare per iteration (a durable iteration is two activities: model call and tool). */
  bareRatio: number;
  /** CPU per iteration of each loop. */
  cpu: { plain: CpuFigures; durable: CpuFigures };
  /**
   * One model step: the plain loop's request, normalisation and the reads its reply asked for, against
   * the worker's callModelV2 activity, which runs those reads inline, as it ran (medians, ms).
   */
  modelCall: { plain: SampleSummary; activity: SampleSummary; extraMs: number };
  /** History of the last durable turn. */
  history: HistoryFigures;
  /** Where that turn's time went, from its event times. */
  timeline: TimelineFigures;
}

/** Run `warmup` + `runs` turns of `iterations` model calls reading `file`, on both loops. */
export async function measureEngineOverhead(input: EngineBenchInput, shape: { iterations: number; file: string; runs: number; warmup: number }): Promise<OverheadFigures> {
  const message = benchTurnMessage(shape.iterations, shape.file);
  const plainSamples: number[] = [];
  const durableSamples: number[] = [];
  const plainCalls: number[] = [];
  const activityCalls: number[] = [];
  const cpu = { plain: { process: 0, model: 0 }, durable: { process: 0, model: 0 } };
  const measureCpu = async <T>(into: { process: number; model: number }, fn: () => Promise<T>): Promise<T> => {
    const model = input.modelServerCpuMs?.();
    const start = process.cpuUsage();
    const result = await fn();
    const used = process.cpuUsage(start);
    into.process += (used.user + used.system) / 1000;
    const modelAfter = input.modelServerCpuMs?.();
    if (model !== undefined && modelAfter !== undefined) into.model += modelAfter - model;
    return result;
  };
  // The bare loop runs between the two, turn by turn, so that all three see the same machine.
  const bareRuns: BareRun[] = [];
  let history: HistoryFigures | undefined;
  let timeline: TimelineFigures | undefined;
  for (let i = 0; i < shape.warmup + shape.runs; i++) {
    const timed = i >= shape.warmup;
    input.progress(`${shape.iterations} iterations, ${shape.file}: ${timed ? `run ${i - shape.warmup + 1}/${shape.runs}` : 'warm-up'}`);

    const plainCpu = { process: 0, model: 0 };
    const started = performance.now();
    const plain = await measureCpu(plainCpu, () =>
      runPlainTurn({ client: input.openai, model: input.model, systemMessages: input.systemMessages, tools: input.tools, context: input.context, maxIterations: shape.iterations }, message),
    );
    const plainMs = performance.now() - started;
    expectIterations('plain', plain.iterations, plain.response !== null, shape.iterations);

    // The durable turn's CPU is clocked around the `send` update alone (the bench's history and transcript reads are not the worker's).
    input.durable.takeModelCallTimes();
    const model = input.modelServerCpuMs?.();
    const durable = await input.durable.runTurn(message, shape.iterations);
    const modelAfter = input.modelServerCpuMs?.();
    const durableCpu = { process: durable.cpuMs, model: model !== undefined && modelAfter !== undefined ? modelAfter - model : 0 };
    expectIterations('durable', durable.result.iterations, durable.result.status === 'completed', shape.iterations);
    const modelCalls = input.durable.takeModelCallTimes();
    const bareRun = await input.bare.runOnce(shape.iterations);

    if (timed) {
      for (const key of ['process', 'model'] as const) {
        cpu.plain[key] += plainCpu[key];
        cpu.durable[key] += durableCpu[key];
      }
      plainCalls.push(...plain.callMs);
      activityCalls.push(...modelCalls);
      plainSamples.push(plainMs);
      bareRuns.push(bareRun);
      durableSamples.push(durable.ms);
      history = measureHistory(durable.history);
      timeline = measureTimeline(durable.history);
    }
  }
  if (!history || !timeline) throw new Error('engine bench: at least one timed run is needed');
  const bare = bareFigures(shape.iterations, bareRuns, shape.warmup);
  const plainPerIteration = median(plainSamples) / shape.iterations;
  const its = shape.runs * shape.iterations;
  const perIteration = (c: { process: number; model: number }): CpuFigures => ({
    process: c.process / its,
    ...(input.modelServerCpuMs ? { modelServer: c.model / its } : {}),
  });
  const durablePerIteration = median(durableSamples) / shape.iterations;
  return {
    ...shape,
    plainTurn: summarize(plainSamples),
    durableTurn: summarize(durableSamples),
    plainPerIteration,
    durablePerIteration,
    overheadPerIteration: durablePerIteration - plainPerIteration,
    ratio: durablePerIteration / plainPerIteration,
    bare,
    bareRatio: durablePerIteration / bare.perIteration,
    cpu: { plain: perIteration(cpu.plain), durable: perIteration(cpu.durable) },
    modelCall: { plain: summarize(plainCalls), activity: summarize(activityCalls), extraMs: median(activityCalls) - median(plainCalls) },
    history,
    timeline,
  };
}

/** A turn that ended early or failed would make its timing meaningless. */
function expectIterations(loop: string, got: number, completed: boolean, want: number): void {
  if (!completed || got !== want) {
    throw new Error(`${loop} turn: expected ${want} completed iterations, got ${got}${completed ? '' : ' (not completed)'}`);
  }
}
