/**
 * The benchmark's printed form: the machine, then one plain-text table per group of figures.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { BundleTiming } from './bundle-runtime';
import type { OverheadFigures } from './engine-overhead';
import type { SampleSummary } from './stats';
import { bytes, ms, textTable } from './text-table';

/** The machine and software the figures were measured on. */
export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  platform: string;
  node: string;
  temporalSdk: string;
  temporalCli: string;
}

/** Everything one bench run measured. */
export interface BenchReport {
  machine: MachineInfo;
  engine: OverheadFigures[];
  /** The 50-iteration turn reading the 10 KB file (history growth). */
  growth: OverheadFigures;
  bundle: BundleTiming[];
  totalSeconds: number;
}

/** Describe this machine; `temporalCli` is the executable that ran the dev server. */
export function machineInfo(temporalCli: string): MachineInfo {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    temporalSdk: packageVersion('@temporalio/worker'),
    temporalCli,
  };
}

function packageVersion(name: string): string {
  const file = require.resolve(`${name}/package.json`);
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
}

/** The report as text. */
export function formatReport(report: BenchReport): string {
  const m = report.machine;
  return [
    `Loopwright bench — ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.platform}`,
    `Node ${m.node}, Temporal SDK ${m.temporalSdk}, dev server ${m.temporalCli}; bench took ${report.totalSeconds.toFixed(1)} s`,
    '',
    formatOverhead(report.engine),
    '',
    formatTimeline([...report.engine, report.growth].filter((e) => e.iterations === 50)),
    '',
    formatHistory([...report.engine, report.growth], report.growth),
    '',
    formatBundle(report.bundle),
  ].join('\n');
}

function formatOverhead(engine: OverheadFigures[]): string {
  const first = engine[0];
  const title =
    `1. Engine overhead per iteration (iteration = one model call; every call but the last asks for read_file;` +
    ` medians of ${first?.runs ?? 0} turns after ${first?.warmup ?? 0} warm-up; zero-latency fake model)`;
  const range = (s: SampleSummary, digits: number) => `${ms(s.median, digits)} (${ms(s.min, digits)}..${ms(s.max, digits)})`;
  return [
    title,
    textTable(
      ['turn', 'plain ms/it', 'durable ms/it', 'overhead ms/it', 'durable/plain', 'plain turn ms (min..max)', 'durable turn ms (min..max)'],
      engine.map((e) => [
        turnLabel(e),
        ms(e.plainPerIteration, 3),
        ms(e.durablePerIteration, 2),
        ms(e.overheadPerIteration, 2),
        `${e.ratio.toFixed(1)}x`,
        range(e.plainTurn, 1),
        range(e.durableTurn, 1),
      ]),
    ),
  ].join('\n');
}

function formatTimeline(turns: OverheadFigures[]): string {
  const steps: [string, (e: OverheadFigures) => SampleSummary | undefined][] = [
    ['callModel activity (scheduled..completed)', (e) => e.timeline.activities.callModel],
    ['read_file activity (scheduled..completed)', (e) => e.timeline.activities.read_file],
    ['workflow task waiting for the worker', (e) => e.timeline.workflowTaskDispatch],
    ['workflow task run by the worker', (e) => e.timeline.workflowTaskRun],
  ];
  return [
    `   Where a durable iteration's time goes (ms, from the event times of the last history of: ${turns.map(turnLabel).join('; ')}):`,
    textTable(
      ['step', ...turns.flatMap((e) => [`${fileLabel(e.file)} median`, 'p95'])],
      steps.map(([label, pick]) => [
        label,
        ...turns.flatMap((e) => {
          const s = pick(e);
          return s ? [ms(s.median, 1), ms(s.p95, 1)] : ['-', '-'];
        }),
      ]),
    ),
  ].join('\n');
}

function formatHistory(turns: OverheadFigures[], growth: OverheadFigures): string {
  const points = growth.history.growth.filter((p) => p.iteration % 10 === 0);
  return [
    '2. Workflow history after one turn (fresh session: agent initialisation + the turn; fetched before the session ends)',
    textTable(
      ['turn', 'events', 'JSON bytes', 'protobuf bytes', 'payload bytes', 'protobuf bytes/it'],
      turns.map((e) => [
        turnLabel(e),
        String(e.history.events),
        bytes(e.history.jsonBytes),
        bytes(e.history.protoBytes),
        bytes(e.history.payloadBytes),
        bytes(Math.round(e.history.protoBytes / e.iterations)),
      ]),
    ),
    '',
    `   Growth of the ${turnLabel(growth)} turn (protobuf bytes of the events up to the end of iteration k):`,
    textTable(
      ['k', ...points.map((p) => String(p.iteration))],
      [
        ['history bytes', ...points.map((p) => bytes(p.bytes))],
        ['added by iteration k', ...points.map((p) => bytes(addedBy(growth, p.iteration)))],
      ],
    ),
    `   That turn took ${ms(growth.durableTurn.median, 1)} ms durable (${ms(growth.durablePerIteration, 2)} ms/it)` +
      ` and ${ms(growth.plainTurn.median, 1)} ms plain (${ms(growth.plainPerIteration, 3)} ms/it), ${growth.runs} run each.`,
  ].join('\n');
}

function formatBundle(timings: BundleTiming[]): string {
  return [
    '3. Bundle runtime (in process, no Temporal; example bundle)',
    textTable(
      ['operation', 'runs', 'median ms', 'p95 ms', 'max ms'],
      timings.map((b) => [
        b.bytes === undefined ? b.operation : `${b.operation} (${b.bytes} B)`,
        String(b.summary.runs),
        ms(b.summary.median, 3),
        ms(b.summary.p95, 3),
        ms(b.summary.max, 3),
      ]),
    ),
  ].join('\n');
}

/** History bytes written by iteration `k` alone (k > 1). */
function addedBy(figures: OverheadFigures, k: number): number {
  const points = figures.history.growth;
  return (points[k - 1]?.bytes ?? 0) - (points[k - 2]?.bytes ?? 0);
}

function turnLabel(e: OverheadFigures): string {
  return `${e.iterations} it, ${fileLabel(e.file)}`;
}

function fileLabel(file: string): string {
  return file.endsWith('notes-10k.md') ? '10 KB file' : file.replace('{bundle-root}/', '');
}
