/**
 * What the command sandbox costs per command: `true` spawned directly against `true` through
 * `runSandboxed` (bwrap, the path checks and the secret-file scan), over a small project and over
 * this checkout (tens of thousands of files with node_modules), and the scan alone; and a BMAD-style
 * script (PEP 723, no dependencies): `python3 script.py` directly against the same in the sandbox
 * and `uv run script.py` in the sandbox as `run_command` runs it (uv offered, offline, the
 * machine's Python, a fresh cache each time). No Temporal server and no model. Needs bwrap and uv
 * (`npm run setup`); without uv the script figures are left out, saying so.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runSandboxed } from '../../activities/commands/sandbox-runner';
import { resolveSandboxPaths } from '../../activities/commands/sandbox-paths';
import { BASE_ENV } from '../../activities/commands/sandbox-env';
import type { SandboxRequest } from '../../activities/commands/sandbox-request';
import { findUv, systemPython, uvEnvironment, uvTools } from '../../activities/commands/uv-tool';
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
  /** A no-dependency PEP 723 script: `python3` directly, `python3` and `uv run` sandboxed; or why they were not measured. */
  script: { python: string; uv: string; direct: SampleSummary; sandboxedPython: SampleSummary; sandboxedUv: SampleSummary } | { skipped: string };
}

/** A script as BMAD ships them: a PEP 723 header, the standard library only. */
const SCRIPT = '# /// script\n# requires-python = ">=3.8"\n# ///\nimport json, sys\nprint(json.dumps({"ok": True, "args": sys.argv[1:]}))\n';

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
    const script = await measureScript(dir, options);
    return { runs: RUNS, direct, sandboxedSmall, sandboxedCheckout, scanSmall, scanCheckout, checkoutHidden, script };
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
    '',
    formatScript(f),
  ].join('\n');
}

function formatScript(f: SandboxFigures): string {
  if ('skipped' in f.script) return `A PEP 723 script (no dependencies): not measured, ${f.script.skipped}`;
  const s = f.script;
  const row = (label: string, x: SampleSummary) => [label, `${ms(x.median, 1)} (${ms(x.min, 1)}..${ms(x.p95, 1)})`];
  return [
    `A PEP 723 script with no dependencies (as BMAD ships), small project, ms median (min..p95) of ${f.runs} runs; ${s.uv}, ${s.python}`,
    textTable(
      ['measure', 'ms'],
      [row('python3 script.py, spawned directly', s.direct), row('python3 script.py, runSandboxed', s.sandboxedPython), row('uv run script.py, runSandboxed (offline, fresh cache)', s.sandboxedUv)],
    ),
    `   uv run in the sandbox costs ${ms(s.sandboxedUv.median - s.direct.median, 1)} ms more than python3 directly,` +
      ` of which ${ms(s.sandboxedUv.median - s.sandboxedPython.median, 1)} ms is uv's (its environment made anew in the empty cache of every command).`,
  ].join('\n');
}

/** The script figures over the small project `dir`, or why they cannot be taken here. */
async function measureScript(dir: string, options: { progress: (line: string) => void }): Promise<SandboxFigures['script']> {
  const uv = await findUv();
  const python = await systemPython();
  if (uv === undefined) return { skipped: 'no uv in the tools folder nor on the PATH (npm run setup installs it)' };
  if (python === undefined) return { skipped: 'no python3 in /usr/local/bin or /usr/bin' };
  const script = path.join(dir, 'script.py');
  await fs.writeFile(script, SCRIPT);
  options.progress(`sandbox: ${RUNS} runs each of a PEP 723 script with python3 directly, sandboxed, and uv run sandboxed`);
  const request: SandboxRequest = { command: [], projectRoot: dir, env: uvEnvironment({ network: false, python }), tools: uvTools(uv) };
  const direct = await timed(() => spawnChecked(python, [script, 'x']));
  const sandboxedPython = await timed(() => runChecked({ ...request, command: [python, script, 'x'] }));
  const sandboxedUv = await timed(() => runChecked({ ...request, command: ['uv', 'run', script, 'x'] }));
  const version = await new Promise<string>((resolve) => execFile(uv.path, ['--version'], (error, stdout) => resolve(error ? 'uv (version unknown)' : stdout.trim())));
  const pythonVersion = await new Promise<string>((resolve) => execFile(python, ['--version'], (error, stdout) => resolve(error ? python : `${python} ${stdout.trim()}`)));
  return { python: pythonVersion, uv: version, direct, sandboxedPython, sandboxedUv };
}

function spawnChecked(file: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => execFile(file, args, { env: { ...BASE_ENV } }, (error) => (error ? reject(error) : resolve())));
}

async function runChecked(request: SandboxRequest): Promise<void> {
  const result = await runSandboxed(request);
  if (result.exitCode !== 0 || !result.sandboxed || !result.stdout.includes('"ok": true')) throw new Error(`sandbox bench: ${JSON.stringify(request.command)} failed: ${JSON.stringify(result)}`);
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
