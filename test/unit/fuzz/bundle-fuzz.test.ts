/**
 * Fuzz test of bundle loading and agent initialisation: mutated agent, workflow and config files
 * (of a small bundle written here and of real BMAD files from the corpus) go through `loadBundle`,
 * `findAgent`, `parseAgent`, `initializeAgent` and `loadWorkflow`. Every outcome must be a success
 * or a `BundleError` whose message names its file (a security refusal names none, by design), and
 * every step must finish within `CASE_BOUND_MS`: a guard against hangs, not a benchmark.
 *
 * Deterministic: a fixed seed drives a small PRNG (mulberry32), so a failure names the case and
 * its mutations and replays the same way. Set LOOPWRIGHT_FUZZ_SEED and LOOPWRIGHT_FUZZ_CASES to
 * explore further locally.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseAgent } from '../../../bundle/agent-parser';
import { findAgent, loadBundle } from '../../../bundle/bundle-loader';
import { BundleError, SecurityViolationError } from '../../../bundle/errors';
import { initializeAgent } from '../../../bundle/initialize-agent';
import { loadWorkflow } from '../../../bundle/workflow-loader';
import type { RuntimeContext } from '../../../common/runtime-context';
import { makeTempDir, sourceAgent, writeTree } from '../bundle/fixtures';
import { CORPUS as CORPUS_ROOT, corpusPresent } from '../../support/corpus';
import { mulberry32, type Rng } from '../../support/prng';

const SEED = Number(process.env.LOOPWRIGHT_FUZZ_SEED ?? 0x5eed);
const CASES = Number(process.env.LOOPWRIGHT_FUZZ_CASES ?? 300);
/** A step slower than this counts as a hang. */
const CASE_BOUND_MS = 2000;
/** The real BMAD tree the corpus subject is made of; without it only the small bundle is fuzzed (and the output says so). */
const CORPUS = path.join(CORPUS_ROOT, 'v6.0.0-alpha.5/bmad');
const corpusHere = corpusPresent('bundle fuzz, corpus subject', ['v6.0.0-alpha.5/bmad']);

const int = (rng: Rng, n: number) => Math.floor(rng() * n);
const pick = <T>(rng: Rng, items: readonly T[]): T => items[int(rng, items.length)];

/** Adversarial snippets: every case seen in "Hardening", and the shapes around them. */
const POOL: readonly ((rng: Rng) => string)[] = [
  () => '!'.repeat(30),
  () => `- 🚨 ${'!'.repeat(40)} CRITICAL Load`,
  () => `<i>${'!'.repeat(30)}</i>`,
  () => `Load ${'a'.repeat(100_000)}`,
  () => `<i>Load {bundle-root}/${'a.'.repeat(30_000)}</i>`,
  () => `<i>Load ${'{bundle-root}/x.md '.repeat(5000)}</i>`,
  () => 'x'.repeat(100_000),
  (rng) => '<x>'.repeat(1 + int(rng, 10_000)),
  (rng) => `<role>${'<p>'.repeat(int(rng, 200))}deep${'</p>'.repeat(int(rng, 200))}</role>`,
  () => '</agent>',
  () => '<agent name="B" title="T">',
  () => '<i>Load into memory {bundle-root}/config.yaml and set variables: a</i>',
  () => '<i>Load {bundle-root}/../../../../../../etc/passwd</i>',
  () => '<i>Load {nowhere}/config.yaml</i>',
  () => '<i>Remember {user_name} and {output_folder} and {b30}</i>',
  () => '<c cmd="*x" run-workflow="{bundle-root}/workflows/intake-workflow/workflow.yaml">x</c>',
  () => '<item cmd="*x" workflow="{nowhere}/w.yaml">x</item>',
  (rng) => '['.repeat(1 + int(rng, 10_000)),
  (rng) => `deep: ${'{a: '.repeat(1 + int(rng, 200))}1${'}'.repeat(int(rng, 200))}`,
  (rng) => Array.from({ length: 1 + int(rng, 300) }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n'),
  () => 'cyc: &c [*c]',
  () => `a0: &a0 [x, x]\n${Array.from({ length: 30 }, (_, i) => `a${i + 1}: &a${i + 1} [*a${i}, *a${i}, *a${i}]`).join('\n')}`,
  (rng) => Array.from({ length: 1 + int(rng, 3000) }, (_, i) => `k${i.toString(36)}: &n${i} x`).join('\n'),
  (rng) => Array.from({ length: 1 + int(rng, 100_000) }, (_, i) => `k${i.toString(36)}: 1`).join('\n'),
  (rng) => `list: [${'1,'.repeat(int(rng, 20_000))}]`,
  () => ','.repeat(30_000),
  (rng) => `${Array.from({ length: 1 + int(rng, 5000) }, (_, i) => `v${i}: '{v${i + 1}}'`).join('\n')}\nv5000: end`,
  () => `b0: xxxx\n${Array.from({ length: 30 }, (_, i) => `b${i + 1}: '{b${i}}{b${i}}'`).join('\n')}`,
  () => "output_folder: '{output_folder}/docs'",
  () => "user_name: '{user_name}'",
  () => 'config_source: "{output_folder}/config.yaml"',
  () => 'config_source: "{nowhere}/config.yaml"',
  () => 'instructions: "{nowhere}/instructions.md"',
  () => 'template: [1, 2]',
  () => 'installed_path: "{installed_path}/x"',
  () => 'default_output_file: "{{story_key}}/{config_source}:nokey"',
  () => '---\nsecond: document',
  () => '? [a, b]\n: complex key',
  () => '<<: *nothing',
  () => '!!binary aGVsbG8=',
  () => '%YAML 1.1\n---',
  () => 'user_name: "unterminated',
  () => '\t- tab: indented',
  () => '\u2028\u2029\uFEFF\u0000\uD800',
  () => '{{x}} {config_source}:user_name {date} {project_root}',
  // "Read" lines and single-variable load targets (decided from the variable's value).
  () => `<i>Read ${'the '.repeat(20_000)}x.md</i>`,
  () => `<i>Read ${'{bundle-root}/x.md and '.repeat(3000)}</i>`,
  () => `<i>CRITICAL: Read ${'`'.repeat(30_000)}{user_name}</i>`,
  () => '<i>Load COMPLETE file {notes_file}</i>',
  () => '<i>Read {config_source} and {output_folder}</i>',
  () => `<i>Load ${Array.from({ length: 3000 }, (_, i) => `{v${i}}`).join(' ')}</i>`,
  () => "notes_file: '{bundle-root}/../../etc/passwd.md'",
  () => "notes_file: '{notes_file}/x.md'",
];

/** Random characters: structure-heavy ASCII, controls, a few non-ASCII and astral ones. */
function randomText(rng: Rng, length: number): string {
  const alphabet = '{}[]<>/!&*:-?#|>\'"`,.\\ \n\t=%@aZ09_\u0000\u00e9\u2028\u{1F6A8}';
  const chars = [...alphabet];
  let out = '';
  for (let i = 0; i < length; i++) out += pick(rng, chars);
  return out;
}

type Mutation = (text: string, rng: Rng) => string;

const MUTATIONS: Record<string, Mutation> = {
  deleteLine: (text, rng) => {
    const lines = text.split('\n');
    lines.splice(int(rng, lines.length), 1 + int(rng, 3));
    return lines.join('\n');
  },
  duplicateLine: (text, rng) => {
    const lines = text.split('\n');
    const at = int(rng, lines.length);
    lines.splice(at, 0, ...Array.from({ length: 1 + int(rng, 3) }, () => lines[at]));
    return lines.join('\n');
  },
  swapLines: (text, rng) => {
    const lines = text.split('\n');
    const a = int(rng, lines.length);
    const b = int(rng, lines.length);
    [lines[a], lines[b]] = [lines[b], lines[a]];
    return lines.join('\n');
  },
  insertSnippet: (text, rng) => {
    const lines = text.split('\n');
    lines.splice(int(rng, lines.length + 1), 0, pick(rng, POOL)(rng));
    return lines.join('\n');
  },
  replaceLine: (text, rng) => {
    const lines = text.split('\n');
    lines[int(rng, lines.length)] = pick(rng, POOL)(rng);
    return lines.join('\n');
  },
  insertInline: (text, rng) => {
    const at = int(rng, text.length + 1);
    return text.slice(0, at) + pick(rng, POOL)(rng) + text.slice(at);
  },
  randomBytes: (text, rng) => {
    const at = int(rng, text.length + 1);
    return text.slice(0, at) + randomText(rng, 1 + int(rng, 40)) + text.slice(at + int(rng, 10));
  },
  truncate: (text, rng) => text.slice(0, int(rng, text.length)),
  appendSnippet: (text, rng) => `${text}\n${pick(rng, POOL)(rng)}\n`,
};
const MUTATION_NAMES = Object.keys(MUTATIONS);

/** A tree the pipeline runs on, and which of its files the fuzzer mutates. */
interface Subject {
  name: string;
  root: string;
  agentId: string;
  workflows: string[];
  targets: string[];
}

async function smallBundle(root: string): Promise<Subject> {
  await writeTree(root, {
    'config.yaml': ['user_name: Bryan', 'communication_language: English', "output_folder: '{project-root}/docs'", 'project_name: Demo', "stories: '{output_folder}/stories'", ''].join('\n'),
    'agents/alex.md': sourceAgent([
      'Load into memory {bundle-root}/config.yaml and set variables: project_name, output_folder, user_name',
      "Remember the user's name is {user_name}",
      'ALWAYS communicate in {communication_language}',
      'Save to {stories} on {date}',
    ]),
    'workflows/intake-workflow/workflow.yaml': [
      'name: intake-workflow',
      'description: "Intake for {project_name}"',
      'config_source: "{bundle-root}/config.yaml"',
      'output_folder: "{config_source}:output_folder"',
      'user_name: "{config_source}:user_name"',
      'date: system-generated',
      'installed_path: "{bundle-root}/workflows/intake-workflow"',
      'instructions: "{installed_path}/instructions.md"',
      'template: "{installed_path}/template.md"',
      'default_output_file: "{output_folder}/requirements-{date}.md"',
      'variables:',
      '  story_dir: "{config_source}:stories"',
      '  later: "{{story_key}}"',
      'input_file_patterns:',
      '  brief:',
      '    whole: "{output_folder}/*brief*.md"',
      '',
    ].join('\n'),
    'workflows/intake-workflow/instructions.md': '<step n="1">Ask</step>\n',
    'workflows/intake-workflow/template.md': '# {{project_name}}\n',
  });
  return {
    name: 'small bundle',
    root,
    agentId: 'alex',
    workflows: ['{bundle-root}/workflows/intake-workflow/workflow.yaml'],
    targets: ['agents/alex.md', 'workflows/intake-workflow/workflow.yaml', 'config.yaml'],
  };
}

/** An installed tree made of real BMAD files (read from the corpus at test time). */
async function corpusTree(project: string): Promise<Subject> {
  const copy = ['core/config.yaml', 'bmm/config.yaml', 'bmm/agents/pm.md'];
  const prd = 'bmm/workflows/2-plan-workflows/prd';
  for (const name of await fs.readdir(path.join(CORPUS, prd))) {
    if ((await fs.stat(path.join(CORPUS, prd, name))).isFile()) copy.push(`${prd}/${name}`);
  }
  const files: Record<string, string> = {};
  for (const rel of copy) files[`bmad/${rel}`] = await fs.readFile(path.join(CORPUS, rel), 'utf8');
  await writeTree(project, files);
  return {
    name: 'corpus tree',
    root: project,
    agentId: 'bmm/pm',
    workflows: [`{project-root}/bmad/${prd}/workflow.yaml`],
    targets: ['bmad/bmm/agents/pm.md', `bmad/${prd}/workflow.yaml`, 'bmad/bmm/config.yaml'],
  };
}

/** What went wrong in one case, for the report. */
interface Failure {
  case: number;
  subject: string;
  target: string;
  mutations: string[];
  step: string;
  problem: string;
}

/** The problem with an outcome, or undefined when it is acceptable. */
function judge(error: unknown): string | undefined {
  if (!(error instanceof BundleError)) {
    const e = error as Error;
    return `not a BundleError: ${e?.name}: ${String(e?.message).slice(0, 300)}`;
  }
  // A refused path is reported without any path, on purpose (see SecurityViolationError).
  if (error instanceof SecurityViolationError) return undefined;
  if (typeof error.file !== 'string' || error.file === '') return `${error.name} without a file: ${error.message.slice(0, 300)}`;
  if (!error.message.includes(error.file)) return `${error.name} whose message does not name ${error.file}: ${error.message.slice(0, 300)}`;
  return undefined;
}

/** Runs `step`, returning a problem (error not acceptable, or too slow) or undefined. */
async function check<T>(step: () => Promise<T>): Promise<{ value?: T; problem?: string }> {
  const start = performance.now();
  let value: T | undefined;
  let problem: string | undefined;
  try {
    value = await step();
  } catch (error) {
    problem = judge(error);
  }
  const ms = performance.now() - start;
  if (ms > CASE_BOUND_MS) problem = `took ${ms.toFixed(0)} ms (bound ${CASE_BOUND_MS} ms)${problem ? `; ${problem}` : ''}`;
  return { ...(value !== undefined ? { value } : {}), ...(problem !== undefined ? { problem } : {}) };
}

/** The whole pipeline on `subject`; returns the problems found, by step. */
async function runPipeline(subject: Subject): Promise<{ step: string; problem: string }[]> {
  const problems: { step: string; problem: string }[] = [];
  const parse = await check(async () => {
    const found = await findAgent(await loadBundle(subject.root), subject.agentId);
    return parseAgent(await fs.readFile(found.file, 'utf8'), found.file);
  });
  if (parse.problem) problems.push({ step: 'loadBundle/findAgent/parseAgent', problem: parse.problem });
  const init = await check(() => initializeAgent({ bundlePath: subject.root, agentId: subject.agentId }));
  if (init.problem) problems.push({ step: 'initializeAgent', problem: init.problem });
  const context: RuntimeContext | undefined = init.value?.context;
  if (!context) return problems;
  for (const workflow of subject.workflows) {
    const load = await check(() => loadWorkflow(workflow, context));
    if (load.problem) problems.push({ step: `loadWorkflow ${workflow}`, problem: load.problem });
  }
  return problems;
}

let tmp: string;
let subjects: Subject[];
beforeAll(async () => {
  tmp = await makeTempDir('lw-fuzz-');
  subjects = [await smallBundle(path.join(tmp, 'small')), ...(corpusHere ? [await corpusTree(path.join(tmp, 'corpus'))] : [])];
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('bundle fuzz', () => {
  test('fuzz: the unmutated subjects initialise and load their workflows', async () => {
    for (const subject of subjects) expect(await runPipeline(subject)).toEqual([]);
  });

  test(`fuzz: ${CASES} mutated agent, workflow and config files give a success or a typed error naming the file, in bounded time`, async () => {
    const rng = mulberry32(SEED);
    const failures: Failure[] = [];
    for (let n = 0; n < CASES; n++) {
      const subject = subjects[n % subjects.length];
      const target = pick(rng, subject.targets);
      const file = path.join(subject.root, target);
      const original = await fs.readFile(file, 'utf8');
      const mutations = Array.from({ length: 1 + int(rng, 3) }, () => pick(rng, MUTATION_NAMES));
      let text = original;
      for (const name of mutations) text = MUTATIONS[name](text, rng);
      await fs.writeFile(file, text);
      try {
        for (const { step, problem } of await runPipeline(subject)) {
          failures.push({ case: n, subject: subject.name, target, mutations, step, problem });
        }
      } finally {
        await fs.writeFile(file, original);
      }
    }
    // Seed and case number replay a failure: LOOPWRIGHT_FUZZ_SEED=<seed>, then look at case n.
    expect({ seed: SEED, failures: failures.slice(0, 10), count: failures.length }).toEqual({ seed: SEED, failures: [], count: 0 });
  });
});
