/**
 * What the command sandbox costs per command: `true` spawned directly against `true` through
 * `runSandboxed` (bwrap, the path checks and the secret-file scan), over a small project and over
 * this checkout (tens of thousands of files with node_modules), and the scan alone. No Temporal
 * server and no model. Needs bwrap (`npm run setup`).
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runSandboxed } from '../../activities/commands/sandbox-runner';
import { resolveSandboxPaths } from '../../activities/commands/sandbox-paths';
import { BASE_ENV } from '../../activities/commands/sandbox-env';
import { summarize, type SampleSummary } from './stats';
import { ms, textTable } from './text-table';

const RUNS = 30;
const WARMUP = 3;

/** The sandbox part's figures, in ms. */
export interface SandboxFigures {
  runs: number;
  direct: SampleSummary;
  sandboxedSmall: SampleSummary;
  sandboxedCheckout: SampleSummary;
  scanSmall: SampleSummary;
  scanCheckout: SampleSummary;
  checkoutHidden: number;
}

/** Builds a small project, measures, and removes it. */
export async function measureSandbox(options: { progress: (line: string) => void }): Promise<SandboxFigures> {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'loopwright-bench-sandbox-')));
  try {
    await fs.chmod(dir, 0o755);
    for (const [name, content] of Object.entries({ 'README.md': '# Bench\n', 'src/main.ts': 'export {};\n', '.env': 'KEY=x\n' })) {
      await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await fs.writeFile(path.join(dir, name), content);
    }
    const checkout = path.resolve(__dirname, '../..');
    options.progress(`sandbox: ${RUNS} runs each of true directly, sandboxed, and of the secret-file scan`);
    const direct = await timed(() => spawnTrue());
    const sandboxedSmall = await timed(() => runTrue(dir));
    const sandboxedCheckout = await timed(() => runTrue(checkout));
    const scanSmall = await timed(() => resolveSandboxPaths({ projectRoot: dir }));
    const scanCheckout = await timed(() => resolveSandboxPaths({ projectRoot: checkout }));
    const checkoutHidden = (await resolveSandboxPaths({ projectRoot: checkout })).hidden.length;
    return { runs: RUNS, direct, sandboxedSmall, sandboxedCheckout, scanSmall, scanCheckout, checkoutHidden };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** The figures as a table. */
export function formatSandbox(f: SandboxFigures): string {
  const row = (label: string, s: SampleSummary) => [label, `${ms(s.median, 1)} (${ms(s.min, 1)}..${ms(s.p95, 1)})`];
  return [
    `Sandbox: the cost of one command, ms median (min..p95) of ${f.runs} runs; no Temporal server`,
    textTable(
      ['measure', 'ms'],
      [
        row('true, spawned directly', f.direct),
        row('true, runSandboxed, small project', f.sandboxedSmall),
        row('true, runSandboxed, this checkout', f.sandboxedCheckout),
        row('secret-file scan alone, small project', f.scanSmall),
        row(`secret-file scan alone, this checkout (${f.checkoutHidden} paths hidden)`, f.scanCheckout),
      ],
    ),
    `   The sandbox adds ${ms(f.sandboxedSmall.median - f.direct.median, 1)} ms to a command over a small project;` +
      ` over this checkout, ${ms(f.sandboxedCheckout.median - f.direct.median, 1)} ms, of which the scan is ${ms(f.scanCheckout.median, 1)} ms.`,
  ].join('\n');
}

async function timed(fn: () => Promise<unknown>): Promise<SampleSummary> {
  for (let i = 0; i < WARMUP; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await fn();
    samples.push(performance.now() - started);
  }
  return summarize(samples);
}

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => execFile('true', [], { env: { ...BASE_ENV } }, (error) => (error ? reject(error) : resolve())));
}

async function runTrue(projectRoot: string): Promise<void> {
  const result = await runSandboxed({ command: ['true'], projectRoot });
  if (result.exitCode !== 0 || !result.sandboxed) throw new Error(`sandbox bench: true failed: ${JSON.stringify(result)}`);
}
