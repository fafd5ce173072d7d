/**
 * Conformance: every workflow.yaml of the real BMAD files (../shared/corpus/bmad) goes through the
 * workflow loader. Each resolves; every variable that cannot resolve is reported with its key; the
 * only failures are typed errors (a missing instructions file, an unresolvable path), never a crash.
 *
 * Contexts are those a session would have:
 * - v6.0.0-alpha.5 is an installed tree: `loadBundle` gives the roots, and the variables are the
 *   path variables plus the workflow's module config.yaml (as an agent's critical action loads it);
 * - v6.0.0-alpha.0 is a source tree, whose files name installed paths (`{project-root}/bmad/bmm/...`).
 *   The test lays out what the installer would (bmad/<module> and bmad/core as symlinks into src/)
 *   in a temp folder; the source tree ships no config.yaml, so its config keys stay unresolved.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { RuntimeContext } from '../../common/runtime-context';
import { loadBundle } from '../../bundle/bundle-loader';
import { BundleError, ConfigVariableNotFoundError } from '../../bundle/errors';
import { pathVariables, resolveConfigVariables } from '../../bundle/variables';
import { loadWorkflowContent, resolveWorkflow, WorkflowLoadError, type LoadedWorkflow, type ResolvedWorkflow } from '../../bundle/workflow-loader';
import { CORPUS, corpusPresent } from '../support/corpus';

// Real path: the runtime reports symlink-resolved paths, and shared/ may be reached through a link.
const ALPHA5 = path.join(CORPUS, 'v6.0.0-alpha.5');
const ALPHA0_SRC = path.join(CORPUS, 'v6.0.0-alpha.0/src');
const present = corpusPresent('corpus-workflows', ['v6.0.0-alpha.5', 'v6.0.0-alpha.0/src']);
const describeCorpus = present ? describe : describe.skip;

/** What happened to one workflow.yaml. */
interface Outcome {
  /** Path relative to the tree (bmad/ for alpha.5, src/ for alpha.0). */
  rel: string;
  resolved?: ResolvedWorkflow;
  loaded?: LoadedWorkflow;
  /** A typed error from loading instructions/template. */
  contentError?: BundleError;
  /** Config keys the workflow's config_source defines (empty when none was loaded). */
  configKeys: string[];
  raw: Record<string, unknown>;
}

async function workflowFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name === 'workflow.yaml')
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)))
    .sort();
}

/** Resolves then loads one workflow; anything but a typed error while loading content fails the test. */
async function run(tree: string, rel: string, ctx: RuntimeContext): Promise<Outcome> {
  const file = path.join(tree, rel);
  const raw = parseYaml(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
  const resolved = await resolveWorkflow(file, ctx, { date: '2025-11-04' });
  const configKeys = resolved.configSource ? Object.keys(parseYaml(await fs.readFile(resolved.configSource, 'utf8')) as Record<string, unknown>) : [];
  try {
    return { rel, raw, resolved, configKeys, loaded: await loadWorkflowContent(resolved, ctx) };
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    return { rel, raw, resolved, configKeys, contentError: error };
  }
}

/** Every `{config_source}:key` written in the raw YAML whose key the loaded config lacks, with its field path. */
function missingConfigRefs(value: unknown, configKeys: string[], key = ''): { key: string; variable: string }[] {
  if (typeof value === 'string') {
    return [...value.matchAll(/(?<!\{)\{config_source\}:(\w+)/g)].filter((m) => !configKeys.includes(m[1])).map((m) => ({ key, variable: `config_source:${m[1]}` }));
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => missingConfigRefs(item, configKeys, `${key}[${i}]`));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([k, v]) => missingConfigRefs(v, configKeys, key === '' ? k : `${key}.${k}`));
  }
  return [];
}

const byRel = (outcomes: Outcome[], rel: string): Outcome => {
  const found = outcomes.find((o) => o.rel === rel);
  if (!found) throw new Error(`no outcome for ${rel}`);
  return found;
};

describeCorpus('corpus workflows, v6.0.0-alpha.5 (installed tree)', () => {
  let outcomes: Outcome[];

  beforeAll(async () => {
    const bundle = await loadBundle(ALPHA5);
    expect(bundle.kind).toBe('installed');
    const contexts = new Map<string, RuntimeContext>();
    const contextFor = async (module: string): Promise<RuntimeContext> => {
      const cached = contexts.get(module);
      if (cached) return cached;
      const configSource = path.join(bundle.bundleRoot, module, 'config.yaml');
      const base = pathVariables({ ...bundle, configSource });
      const config = parseYaml(await fs.readFile(configSource, 'utf8')) as Record<string, unknown>;
      const variables = { ...base, ...resolveConfigVariables(config, base) };
      const ctx: RuntimeContext = {
        bundleRoot: bundle.bundleRoot,
        coreRoot: bundle.coreRoot,
        projectRoot: bundle.projectRoot,
        configPath: configSource,
        variables,
        readRoots: [bundle.bundleRoot, bundle.coreRoot, bundle.projectRoot],
        writeRoots: [variables.output_folder],
        maxReadBytes: 1024 * 1024,
      };
      contexts.set(module, ctx);
      return ctx;
    };
    outcomes = [];
    for (const rel of await workflowFiles(bundle.bundleRoot)) {
      outcomes.push(await run(bundle.bundleRoot, rel, await contextFor(rel.split('/')[0])));
    }
  });

  test('alpha.5: all 49 workflow.yaml files resolve', () => {
    expect(outcomes).toHaveLength(49);
    for (const o of outcomes) expect(o.resolved?.path).toBe(path.join(ALPHA5, 'bmad', o.rel));
  });

  test('alpha.5: config_source, installed_path and sibling keys resolve to real paths', () => {
    const prd = byRel(outcomes, 'bmm/workflows/2-plan-workflows/prd/workflow.yaml').loaded!;
    expect(prd.configSource).toBe(path.join(ALPHA5, 'bmad/bmm/config.yaml'));
    expect(prd.config.output_folder).toBe(path.join(ALPHA5, 'docs'));
    expect(prd.config.installed_path).toBe(path.join(ALPHA5, 'bmad/bmm/workflows/2-plan-workflows/prd'));
    expect(prd.config.instructions).toBe(path.join(ALPHA5, 'bmad/bmm/workflows/2-plan-workflows/prd/instructions.md'));
    expect(prd.config.status_file).toBe(path.join(ALPHA5, 'docs/bmm-workflow-status.yaml'));
    expect(prd.config.date).toBe('2025-11-04');
    expect(prd.config.user_skill_level).toBe('intermediate');
    expect(prd.instructions?.length).toBeGreaterThan(1000);
    // `{{x}}` placeholders (even `{{date}}`) are for run time and stay.
    const brief = byRel(outcomes, 'bmm/workflows/1-analysis/product-brief/workflow.yaml').loaded!;
    expect(brief.config.default_output_file).toBe(path.join(ALPHA5, 'docs/product-brief-{{project_name}}-{{date}}.md'));
  });

  test('alpha.5: the real missing config keys are reported with their keys (dev-story asks for keys bmm/config.yaml lacks)', () => {
    const dev = byRel(outcomes, 'bmm/workflows/4-implementation/dev-story/workflow.yaml');
    expect(dev.resolved!.unresolved).toEqual([
      { key: 'run_until_complete', variable: 'config_source:run_until_complete' },
      { key: 'run_tests_command', variable: 'config_source:run_tests_command' },
    ]);
    // It still loads: the unresolved fields are data for the model, not paths to read.
    expect(dev.loaded?.instructions?.length).toBeGreaterThan(1000);
  });

  test('alpha.5: every {config_source}:key whose key the config lacks is reported at its field', () => {
    let checked = 0;
    for (const o of outcomes) {
      if (!o.resolved?.configSource) continue;
      const expected = missingConfigRefs(o.raw, o.configKeys);
      checked += expected.length;
      expect({ rel: o.rel, unresolved: o.resolved.unresolved }).toEqual({
        rel: o.rel,
        unresolved: expect.arrayContaining(expected),
      });
    }
    expect(checked).toBe(2);
  });

  test('alpha.5: the workflows with unresolved variables are exactly the known ones', () => {
    const withUnresolved = Object.fromEntries(outcomes.filter((o) => o.resolved!.unresolved.length > 0).map((o) => [o.rel, [...new Set(o.resolved!.unresolved.map((u) => u.variable))].sort()]));
    expect(withUnresolved).toEqual({
      'bmb/workflows/create-workflow/workflow-template/workflow.yaml': ['WORKFLOW_CODE', 'WORKFLOW_DESCRIPTION', 'module-code', 'workflow-code'],
      'bmm/workflows/4-implementation/dev-story/workflow.yaml': ['config_source:run_tests_command', 'config_source:run_until_complete'],
      'bmm/workflows/testarch/atdd/workflow.yaml': ['story_id'],
      'bmm/workflows/testarch/test-design/workflow.yaml': ['epic_num'],
    });
  });

  test('alpha.5: only typed errors, and only where the files are really broken', () => {
    const failed = Object.fromEntries(outcomes.filter((o) => o.contentError).map((o) => [o.rel, o.contentError!]));
    expect(Object.keys(failed).sort()).toEqual(['bmb/workflows/create-workflow/workflow-template/workflow.yaml', 'bmb/workflows/redoc/workflow.yaml']);
    // redoc's installed_path lacks the bmad/ prefix and points at the source tree.
    const redoc = failed['bmb/workflows/redoc/workflow.yaml'];
    expect(redoc).toBeInstanceOf(WorkflowLoadError);
    expect(redoc.field).toBe('instructions');
    expect(redoc.message).toContain(`open '${path.join(ALPHA5, 'src/modules/bmb/workflows/redoc/instructions.md')}'`);
    // The template of templates keeps its placeholders in the paths that would be read.
    const template = failed['bmb/workflows/create-workflow/workflow-template/workflow.yaml'];
    expect(template).toBeInstanceOf(ConfigVariableNotFoundError);
    expect(template).toMatchObject({ key: 'module-code', field: 'instructions' });
  });

  test('alpha.5: template false and absent templates load as null; present ones load as text', () => {
    const loaded = outcomes.filter((o) => o.loaded).map((o) => o.loaded!);
    expect(loaded).toHaveLength(47);
    const withFalse = outcomes.filter((o) => o.raw.template === false);
    expect(withFalse.length).toBeGreaterThan(10);
    for (const o of withFalse) expect(o.loaded?.template ?? null).toBeNull();
    const withTemplate = loaded.filter((w) => typeof w.config.template === 'string');
    expect(withTemplate.length).toBeGreaterThan(20);
    for (const w of withTemplate) expect(typeof w.template).toBe('string');
  });
});

describeCorpus('corpus workflows, v6.0.0-alpha.0 (source tree laid out as installed)', () => {
  let tmp: string;
  let outcomes: Outcome[];

  beforeAll(async () => {
    tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'loopwright-alpha0-')));
    const bmad = path.join(tmp, 'bmad');
    await fs.mkdir(bmad);
    await fs.symlink(path.join(ALPHA0_SRC, 'core'), path.join(bmad, 'core'));
    for (const module of await fs.readdir(path.join(ALPHA0_SRC, 'modules'))) {
      await fs.symlink(path.join(ALPHA0_SRC, 'modules', module), path.join(bmad, module));
    }
    // bmad-init names its files under {project-root}/src.
    await fs.symlink(ALPHA0_SRC, path.join(tmp, 'src'));
    const coreRoot = path.join(bmad, 'core');
    const ctx: RuntimeContext = {
      bundleRoot: bmad,
      coreRoot,
      projectRoot: tmp,
      variables: pathVariables({ bundleRoot: bmad, coreRoot, projectRoot: tmp }),
      // The symlinks resolve into the corpus, so the source tree is a read root too.
      readRoots: [tmp, ALPHA0_SRC],
      writeRoots: [path.join(tmp, 'docs')],
      maxReadBytes: 1024 * 1024,
    };
    outcomes = [];
    for (const rel of await workflowFiles(ALPHA0_SRC)) outcomes.push(await run(ALPHA0_SRC, rel, ctx));
  });

  afterAll(async () => {
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  });

  test('alpha.0: all 14 workflow.yaml files resolve, with a warning for each config_source the source tree lacks', () => {
    expect(outcomes).toHaveLength(14);
    const warned = outcomes.filter((o) => o.resolved!.warnings.some((w) => w.key === 'config_source'));
    expect(warned.map((o) => o.rel)).toEqual(outcomes.filter((o) => typeof o.raw.config_source === 'string').map((o) => o.rel));
    expect(warned.length).toBe(13);
  });

  test('alpha.0: every {config_source}:key is reported with its key, including src_impact of create-agent', () => {
    for (const o of outcomes) {
      expect({ rel: o.rel, unresolved: o.resolved!.unresolved }).toEqual({
        rel: o.rel,
        unresolved: expect.arrayContaining(missingConfigRefs(o.raw, [])),
      });
    }
    const createAgent = byRel(outcomes, 'modules/bmb/workflows/create-agent/workflow.yaml');
    expect(createAgent.resolved!.unresolved).toContainEqual({ key: 'src_impact', variable: 'config_source:src_impact' });
  });

  test('alpha.0: instructions paths that point at folders that do not exist fail with typed errors naming the field', () => {
    const failed = outcomes.filter((o) => o.contentError);
    expect(failed.map((o) => o.rel)).toEqual([
      'modules/bmb/workflows/create-agent/workflow.yaml',
      'modules/bmm/workflows/4-implementation/create-story/workflow.yaml',
      'modules/bmm/workflows/4-implementation/dev-story/workflow.yaml',
      'modules/bmm/workflows/4-implementation/story-context/workflow.yaml',
    ]);
    for (const o of failed) {
      expect(o.contentError).toBeInstanceOf(WorkflowLoadError);
      expect(o.contentError).toMatchObject({ field: 'instructions' });
      expect(o.contentError!.message).toMatch(/ENOENT: no such file or directory/);
    }
    const ok = outcomes.filter((o) => o.loaded);
    expect(ok).toHaveLength(10);
    for (const o of ok) expect(o.loaded!.instructions?.length).toBeGreaterThan(100);
  });
});
