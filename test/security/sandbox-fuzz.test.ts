/**
 * Fuzz test of the tools' sandbox, as an agent gone wrong would probe it: seeded random paths
 * (escapes, symlinks in and out, secret files, the files the bundle loader reads, hostile names)
 * through `read_file`, `execute_workflow` and `save_output` on a stand-alone bundle whose project
 * root is its own folder and whose output folder is that root (the layout that exposes the most), while a child process flips a folder
 * under the output folder between a real folder and a symlink to an outside folder.
 *
 * The oracle is independent of the engine's own rules:
 * - escape: the outside folder changes in any way, or a read returns its canary;
 * - secret: a read returns the canary every credential file here holds;
 * - self-write: the agent as the next session would load it (bundle, agent files, opening
 *   messages, context) differs from before the case;
 * - debris: a temporary file of the engine's naming from a dead writer survives a write to its folder;
 * - untyped: a tool throws instead of returning `{success: false, error}`;
 * - hang: a call takes longer than `CASE_BOUND_MS` (a guard, not a benchmark).
 *
 * Deterministic in what it tries: LOOPWRIGHT_FUZZ_SEED and LOOPWRIGHT_FUZZ_CASES choose the run
 * (`npm run fuzz` runs three seeds of 1,500 cases and prints the figures); a failure names its
 * seed, case and path. The flipper's timing is not seeded: it is a real race.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { initializeAgent } from '../../bundle/initialize-agent';
import { loadBundle } from '../../bundle/bundle-loader';
import { executeWorkflowTool } from '../../activities/tools/execute-workflow';
import { readFileTool } from '../../activities/tools/read-file';
import { saveOutputTool } from '../../activities/tools/save-output';
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { mulberry32, type Rng } from '../support/prng';

const SEED = Number(process.env.LOOPWRIGHT_FUZZ_SEED ?? 0x5a4d);
const CASES = Number(process.env.LOOPWRIGHT_FUZZ_CASES ?? 300);
const CASE_BOUND_MS = 5_000;
const EXAMPLE_BUNDLE = path.resolve(__dirname, '../../bundles/requirements-facilitator');

const OUTSIDE_CANARY = 'OUTSIDE-CANARY-7f3a';
const SECRET_CANARY = 'SECRET-CANARY-91c2';
/** A pid no process has: above the kernel's largest (2^22). */
const DEAD_PID = 4_194_305;

/** Credential files planted in the project, each holding SECRET_CANARY. */
const SECRET_FILES = [
  '.env',
  'docs/.env.local',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  'credentials.json',
  '.aws/credentials',
  '.aws/config',
  '.docker/config.json',
  '.kube/config',
  '.ssh/id_rsa',
  '.ssh/id_ed25519',
  'keys/server.pem',
  'keys/tls.key',
  '.netrc',
  '.config/gcloud/application_default_credentials.json',
  '.azure/accessTokens.json',
  '.git/config',
];

const PREFIXES = ['', '', '{project-root}/', '{output_folder}/', '{output_folder}/', '{bundle-root}/', '/', '~/', '../', '{output_folder}/../../'];
const SEGMENTS = [
  '..',
  '.',
  'docs',
  'sub',
  'deep',
  'link-out',
  'link-in',
  'race',
  'race',
  'bmad',
  'core',
  'bmm',
  'agents',
  'workflows',
  'intake',
  'config.yaml',
  'bundle.yaml',
  'facilitator.md',
  'workflow.yaml',
  'instructions.md',
  'template.md',
  '_cfg',
  'manifest.yaml',
  'custom',
  'bundles',
  '.loopwright',
  'secret-files',
  'x.md',
  'notes.md',
  'report.md',
  '.aws',
  'credentials',
  '.npmrc',
  '.env',
  '.ssh',
  'id_rsa',
  '.docker',
  'config.json',
  '.kube',
  'config',
  '.git',
  'hooks',
  'pre-commit',
  'keys',
  'server.pem',
  '.netrc',
  'canary.txt',
  'a%2e%2e',
  '..\\..',
  '…',
  'ḟile.md',
  ' ',
  '.x.md.123.0123456789ab.tmp',
  'n'.repeat(300),
];

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)];

/** Folders a bundle loader might start from or descend into, and files it might read there. */
const LOADER_FOLDERS = ['', 'bmad/', 'bmad/core/', 'bmad/bmm/', 'bmad/custom/bundles/x/', 'agents/', 'workflows/intake/', 'docs/', 'docs/bmad/core/'];
const LOADER_FILES = [
  'config.yaml',
  'config.yml',
  'bundle.yaml',
  'agents/x.md',
  'agents/facilitator.md',
  'x.agent.yaml',
  'workflows/w/workflow.yaml',
  'instructions.md',
  'template.md',
  '_cfg/manifest.yaml',
  '.loopwright/secret-files',
];

function randomPath(rng: Rng, outside: string): string {
  const shape = rng();
  // A third of the paths are shaped like what the loader reads or like credential files, which
  // random segments would rarely spell out; the rest are free-form.
  if (shape < 0.2) return pick(rng, ['', '', '{project-root}/', '{output_folder}/', './']) + pick(rng, LOADER_FOLDERS) + pick(rng, LOADER_FILES);
  if (shape < 0.33) return pick(rng, ['', '{project-root}/', '{bundle-root}/', './', 'docs/../']) + pick(rng, SECRET_FILES);
  // Into the folder the flipper swaps for a symlink out, and new folders below it.
  if (shape < 0.45) return pick(rng, ['docs/race/', '{output_folder}/docs/race/', 'docs/race/new/', 'docs/race/a/b/']) + pick(rng, ['x.md', 'report.md', 'canary.txt', 'sub/x.md']);
  const prefix = rng() < 0.05 ? `${outside}/` : pick(rng, PREFIXES);
  const segments = Array.from({ length: 1 + Math.floor(rng() * 5) }, () => pick(rng, SEGMENTS));
  if (rng() < 0.02) segments.push('nul\u0000.md');
  return prefix + segments.join(rng() < 0.05 ? '//' : '/');
}

interface Finding {
  seed: number;
  case: number;
  kind: 'escape' | 'secret' | 'self-write' | 'debris' | 'untyped' | 'hang';
  tool: string;
  path: string;
  detail: string;
}

let dir: string;
let project: string;
let outside: string;
let ctx: RuntimeContext;
let flipper: ChildProcess | undefined;

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), content);
  }
}

/** Every file and folder under `root` (not following links), with a hash of each file's bytes. */
async function snapshot(root: string): Promise<string> {
  const entries: string[] = [];
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    const rel = path.relative(root, full);
    if (entry.isFile())
      entries.push(
        `${rel} ${createHash('sha256')
          .update(await fs.readFile(full))
          .digest('hex')}`,
      );
    else entries.push(`${rel}/`);
  }
  return entries.sort().join('\n');
}

/** The agent as the next session would load it: what the loader finds and what initialisation builds. */
async function loadedAgent(): Promise<string> {
  try {
    const bundle = await loadBundle(project);
    const agents = await Promise.all(
      bundle.agents.map(
        async (a) =>
          `${a.id} ${a.file} ${createHash('sha256')
            .update(await fs.readFile(a.file))
            .digest('hex')}`,
      ),
    );
    const init = await initializeAgent({ bundlePath: project, agentId: 'facilitator' });
    return JSON.stringify({ kind: bundle.kind, config: bundle.configPath, agents, messages: init.messages, context: init.context, warnings: init.warnings });
  } catch (error) {
    return `load failed: ${(error as Error).message}`;
  }
}

/** Engine-named temporary files of a dead writer left in `folder`. */
async function deadTemps(folder: string): Promise<string[]> {
  const names = await fs.readdir(folder).catch(() => [] as string[]);
  return names.filter((name) => new RegExp(`^\\..+\\.${DEAD_PID}\\.[0-9a-f]{12}\\.tmp$`).test(name));
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timed out'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timed out'>((resolve) => (timer = setTimeout(() => resolve('timed out'), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Flips `race` under the output folder between a real folder and a symlink out, as fast as it can. */
function startFlipper(docs: string): ChildProcess {
  const script = `
    const fs = require('node:fs'); const path = require('node:path');
    const [docs, outside] = process.argv.slice(1);
    const race = path.join(docs, 'race'), away = path.join(docs, 'race-away');
    for (;;) {
      try { fs.renameSync(race, away); fs.symlinkSync(outside, race); } catch {}
      try { fs.unlinkSync(race); fs.renameSync(away, race); } catch {}
    }`;
  return spawn(process.execPath, ['-e', script, docs, outside], { stdio: 'ignore' });
}

beforeAll(async () => {
  dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'lw-sandbox-fuzz-')));
  project = path.join(dir, 'project');
  outside = path.join(dir, 'outside');
  await fs.cp(EXAMPLE_BUNDLE, project, { recursive: true });
  // The output folder is the project root, which is the bundle's own folder: every file the loader
  // reads lies inside the write root, so only the sandbox's rules stand between a write and the next session.
  const config = path.join(project, 'config.yaml');
  await fs.writeFile(config, (await fs.readFile(config, 'utf8')).replace(/^output_folder: .*$/m, 'output_folder: "{project-root}"'));
  await writeTree(outside, { 'canary.txt': OUTSIDE_CANARY, 'config.yaml': `user_name: ${OUTSIDE_CANARY}\n`, 'sub/x.md': OUTSIDE_CANARY });
  await writeTree(project, Object.fromEntries(SECRET_FILES.map((file) => [file, `${SECRET_CANARY}\n`])));
  await writeTree(project, { 'docs/sub/notes.md': 'notes\n', 'docs/race/x.md': 'race\n' });
  await fs.symlink(outside, path.join(project, 'docs', 'link-out'));
  await fs.symlink(path.join(project, 'docs', 'sub'), path.join(project, 'docs', 'link-in'));
  await fs.symlink(path.join(outside, 'canary.txt'), path.join(project, 'docs', 'canary.txt'));
  ctx = (await initializeAgent({ bundlePath: project, agentId: 'facilitator' })).context;
}, 60_000);

afterAll(async () => {
  flipper?.kill('SIGKILL');
  await fs.rm(dir, { recursive: true, force: true });
});

test(`sandbox fuzz: ${CASES} random tool calls (seed ${SEED}) give 0 escapes, secrets, self-writes, debris, untyped failures or hangs`, async () => {
  const rng = mulberry32(SEED);
  const findings: Finding[] = [];
  const outsideBefore = await snapshot(outside);
  const agentBefore = await loadedAgent();
  expect(agentBefore).not.toMatch(/^load failed/);
  flipper = startFlipper(path.join(project, 'docs'));
  const counts = { read_file: 0, execute_workflow: 0, save_output: 0, succeeded: 0, refused: 0 };
  for (let n = 0; n < CASES; n++) {
    const file = randomPath(rng, outside);
    const roll = rng();
    const tool = roll < 0.35 ? 'read_file' : roll < 0.45 ? 'execute_workflow' : 'save_output';
    counts[tool]++;
    const note = (kind: Finding['kind'], detail: string): void => void findings.push({ seed: SEED, case: n, kind, tool, path: file, detail });
    let planted: string | undefined;
    if (tool === 'save_output' && rng() < 0.3) {
      // A dead writer's temporary file in the folder this write resolves to, when that folder exists.
      const folder = path.dirname(path.resolve(ctx.writeRoots[0], file.replace(/^\{output_folder\}\//, '')));
      const stat = await fs.lstat(folder).catch(() => undefined);
      if (stat?.isDirectory() && folder.startsWith(`${ctx.writeRoots[0]}/`)) {
        planted = path.join(folder, `.${path.basename(file)}.${DEAD_PID}.0123456789ab.tmp`);
        await fs.writeFile(planted, 'half a write').catch(() => (planted = undefined));
      }
    }
    let result: ToolResult | 'timed out';
    try {
      const call =
        tool === 'read_file'
          ? readFileTool(ctx, { file_path: file })
          : tool === 'execute_workflow'
            ? executeWorkflowTool(ctx, { workflow_path: file })
            : file.includes('race/')
              ? // A burst into the flipped folder: the race is lost by one write in many, not by each.
                Promise.all(Array.from({ length: 8 }, (_, i) => saveOutputTool(ctx, { file_path: file.replace(/([^/]*)$/, `${i}-$1`), content: `written by case ${n}\n` }))).then(
                  (results) => results.find((r) => !r.success) ?? results[0],
                )
              : saveOutputTool(ctx, { file_path: file, content: `written by case ${n}\n` });
      result = await within(call, CASE_BOUND_MS);
    } catch (error) {
      note('untyped', `threw ${(error as Error)?.name}: ${(error as Error)?.message}`);
      continue;
    }
    if (result === 'timed out') {
      note('hang', `no answer within ${CASE_BOUND_MS} ms`);
      continue;
    }
    if (result.success) counts.succeeded++;
    else counts.refused++;
    if (!result.success && (typeof result.error !== 'string' || result.error === '')) note('untyped', `failure without an error message: ${JSON.stringify(result)}`);
    const text = JSON.stringify(result);
    if (text.includes(OUTSIDE_CANARY)) note('escape', 'the result holds the outside canary');
    if (text.includes(SECRET_CANARY)) note('secret', 'the result holds a credential file');
    if (tool === 'save_output') {
      const now = await snapshot(outside);
      if (now !== outsideBefore) {
        note('escape', `the outside folder changed:\n${now}`);
        await fs.rm(outside, { recursive: true, force: true });
        await writeTree(outside, { 'canary.txt': OUTSIDE_CANARY, 'config.yaml': `user_name: ${OUTSIDE_CANARY}\n`, 'sub/x.md': OUTSIDE_CANARY });
      }
      const written = result.success && typeof result.path === 'string' ? result.path : undefined;
      if (written !== undefined) {
        if (!ctx.writeRoots.some((root) => written.startsWith(`${root}/`))) note('escape', `wrote ${written}`);
        if ((await loadedAgent()) !== agentBefore) {
          note('self-write', `the agent loads differently after writing ${written}`);
          // Undo it (the file and the folders it made) so that later cases are judged on their own.
          await fs.rm(written, { force: true });
          for (let up = path.dirname(written); up.startsWith(`${project}/`); up = path.dirname(up)) await fs.rmdir(up).catch(() => undefined);
        }
        const left = await deadTemps(path.dirname(written));
        if (left.length > 0) note('debris', `left ${left.join(', ')}`);
      }
    }
    if (planted) await fs.rm(planted, { force: true });
  }
  flipper.kill('SIGKILL');
  flipper = undefined;
  // The figures `npm run fuzz` prints; a failure lists the first findings with their seed and case.
  const byKind = Object.fromEntries(['escape', 'secret', 'self-write', 'debris', 'untyped', 'hang'].map((k) => [k, findings.filter((f) => f.kind === k).length]));
  process.stdout.write(`sandbox-fuzz seed=${SEED} cases=${CASES} ${JSON.stringify({ ...counts, ...byKind })}\n`);
  expect({ seed: SEED, findings: findings.slice(0, 10), count: findings.length }).toEqual({ seed: SEED, findings: [], count: 0 });
  // The run must exercise both outcomes, or it proves nothing.
  expect(counts.succeeded).toBeGreaterThan(CASES / 20);
  expect(counts.refused).toBeGreaterThan(CASES / 20);
}, 600_000);
