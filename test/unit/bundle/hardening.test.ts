/**
 * The cases of "Hardening" (bounded parsing): each one hung the event loop, overflowed the stack or
 * failed without naming its file before. Times are generous bounds against hangs (the slow cases
 * took 5 s to minutes), not benchmarks. Only names that existed before the fix are imported, so the
 * file also runs against the old code and fails there.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseAgent } from '../../../bundle/agent-parser';
import { parseManifest } from '../../../bundle/bundle-manifest';
import { fileLoadTargets } from '../../../bundle/critical-actions';
import { BundleError, CriticalActionError } from '../../../bundle/errors';
import { initializeAgent } from '../../../bundle/initialize-agent';
import { resolveConfigVariables, resolveVariables } from '../../../bundle/variables';
import { loadWorkflow, resolveWorkflow } from '../../../bundle/workflow-loader';
import { makeBundle, makeTempDir, sourceAgent, writeTree } from './fixtures';

let tmp: string;
beforeEach(async () => {
  tmp = await makeTempDir();
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** Runs `fn`, returns what it threw (or the value) and how long it took. */
async function timed(fn: () => unknown): Promise<{ outcome: unknown; ms: number }> {
  const start = performance.now();
  let outcome: unknown;
  try {
    outcome = await fn();
  } catch (error) {
    outcome = error;
  }
  return { outcome, ms: performance.now() - start };
}

/** A bundle whose config.yaml is `config`; returns the error initialisation fails with. */
async function initWithConfig(config: string): Promise<{ error: CriticalActionError; ms: number; configFile: string }> {
  const root = await makeBundle(path.join(tmp, 'b'), { config });
  const { outcome, ms } = await timed(() => initializeAgent({ bundlePath: root, agentId: 'alex' }));
  expect(outcome).toBeInstanceOf(CriticalActionError);
  return { error: outcome as CriticalActionError, ms, configFile: path.join(root, 'config.yaml') };
}

/** A bundle with `workflows/w/workflow.yaml` = `workflow`, initialised; returns the session context and the workflow path. */
async function withWorkflow(workflow: string, extra: Record<string, string> = {}) {
  const root = await makeBundle(path.join(tmp, 'b'));
  await writeTree(root, { 'workflows/w/workflow.yaml': workflow, ...extra });
  const { context } = await initializeAgent({ bundlePath: root, agentId: 'alex' });
  return { root, context, file: path.join(root, 'workflows/w/workflow.yaml') };
}

function expectLimit(error: unknown, limit: string, file: string): void {
  expect(error).toBeInstanceOf(BundleError);
  expect(error).toMatchObject({ name: 'LimitExceededError', limit, file });
  expect((error as Error).message).toContain(file);
  expect((error as Error).message).toContain(limit);
}

const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${i.toString(36)}: 1`).join('\n') + '\n';

describe('hardening: regular expressions over bundle text run in linear time', () => {
  test('fileLoadTargets: 30 `!` (and 100,000) without a load are rejected at once', async () => {
    const { outcome, ms } = await timed(() => fileLoadTargets('!'.repeat(30)));
    expect(outcome).toEqual([]);
    expect(ms).toBeLessThan(500);
    expect(fileLoadTargets(`- ${'! '.repeat(50_000)}x`)).toEqual([]);
    // The symbols before the verb are still allowed.
    expect(fileLoadTargets('🚨 !!! CRITICAL: Load {bundle-root}/config.yaml')).toEqual(['{bundle-root}/config.yaml']);
  });

  test('fileLoadTargets: a 100,000-character `Load aaaa…` line is scanned once', async () => {
    const { outcome, ms } = await timed(() => fileLoadTargets(`Load ${'a'.repeat(100_000)}`));
    expect(outcome).toEqual([]);
    expect(ms).toBeLessThan(500);
    const long = `${'a/'.repeat(50_000)}b.md`;
    expect(fileLoadTargets(`Load ${long} now`)).toEqual([long]);
    expect(fileLoadTargets(`Load {a}${'.'.repeat(100_000)}x and ${'.'.repeat(100_000)}`)).toEqual([`{a}${'.'.repeat(100_000)}x`]);
    expect(fileLoadTargets(`Load ${'{a}/x.md '.repeat(20_000)}`)).toEqual(['{a}/x.md']);
  });
});

describe('hardening: YAML is bounded in size, aliases and time', () => {
  test('config.yaml: 100,000 keys under 1 MiB are refused by size at once, naming the file and the limit', async () => {
    const { error, ms, configFile } = await initWithConfig(keys(100_000));
    expect(ms).toBeLessThan(2000);
    expectLimit(error.cause, 'MAX_YAML_BYTES', configFile);
    expect(error.message).toContain(configFile);
  });

  test('config.yaml: keys are still unique, and checking it is linear (3,000 keys)', async () => {
    const root = await makeBundle(path.join(tmp, 'b'), { config: `user_name: B\n${keys(3000)}` });
    const { outcome, ms } = await timed(() => initializeAgent({ bundlePath: root, agentId: 'alex' }));
    expect(ms).toBeLessThan(2000);
    expect((outcome as { context: { variables: Record<string, string> } }).context.variables.k2bb).toBe('1');
    const dup = await initWithConfig('user_name: A\nother: 1\nuser_name: B\n');
    expect(dup.error.message).toContain(`Invalid YAML in ${dup.configFile}: Map keys must be unique at line 3`);
  });

  test('config.yaml: 50,000 anchors are refused at once; so are more than 100 in a small file', async () => {
    const big = Array.from({ length: 50_000 }, (_, i) => `k${i.toString(36)}: &a${i.toString(36)} x`).join('\n');
    const { error, ms, configFile } = await initWithConfig(big);
    expect(ms).toBeLessThan(2000);
    expectLimit(error.cause, 'MAX_YAML_BYTES', configFile);

    const small = `user_name: B\nlist: [${Array.from({ length: 101 }, (_, i) => `&a${i} x`).join(', ')}]\n`;
    expectLimit((await initWithConfig(small)).error.cause, 'MAX_YAML_ANCHORS', configFile);
  });

  test('YAML: an alias bomb is stopped by the alias limits; a few aliases still work', async () => {
    const bomb = `a0: &a0 [x, x]\n${Array.from({ length: 30 }, (_, i) => `a${i + 1}: &a${i + 1} [*a${i}, *a${i}, *a${i}]`).join('\n')}\n`;
    const { error, ms, configFile } = await initWithConfig(bomb);
    expect(ms).toBeLessThan(2000);
    expect(error.cause).toMatchObject({ name: 'LimitExceededError', file: configFile });
    expect(['YAML_MAX_ALIAS_COUNT', 'MAX_YAML_ENTRIES']).toContain((error.cause as { limit: string }).limit);

    const { context, file } = await withWorkflow('name: w\nbase: &base {a: 1}\nfirst: *base\nsecond: *base\n');
    const workflow = await resolveWorkflow(file, context);
    expect(workflow.config.second).toEqual({ a: 1 });
  });

  test('workflow.yaml: `cyc: &c [*c]` is an error naming the file, not a stack overflow', async () => {
    const { context, file } = await withWorkflow('name: w\ncyc: &c [*c]\n');
    const { outcome, ms } = await timed(() => resolveWorkflow(file, context));
    expect(ms).toBeLessThan(2000);
    expect(outcome).toBeInstanceOf(BundleError);
    expect(outcome).toMatchObject({ name: 'WorkflowLoadError', file });
    expect((outcome as Error).message).toMatch(/^Invalid YAML in .*workflow\.yaml: an alias refers to a collection that contains it/);
  });

  test('workflow.yaml and bundle.yaml: too large, too deep and too many entries name the file and the limit', async () => {
    const { context, file } = await withWorkflow(`name: w\nx: ${'['.repeat(5000)}${']'.repeat(5000)}\n`);
    expectLimit(await resolveWorkflow(file, context).catch((e: unknown) => e), 'MAX_YAML_DEPTH', file);
    await writeTree(path.dirname(file), { 'workflow.yaml': `name: w\nlist: [${'1,'.repeat(12_000)}]\n` });
    expectLimit(await resolveWorkflow(file, context).catch((e: unknown) => e), 'MAX_YAML_ENTRIES', file);
    await writeTree(path.dirname(file), { 'workflow.yaml': `name: w\n${'#'.repeat(40_000)}\n` });
    expectLimit(await resolveWorkflow(file, context).catch((e: unknown) => e), 'MAX_YAML_BYTES', file);

    expectLimit(
      (() => {
        try {
          return parseManifest(`agents:\n${'  - {id: a, file: a}\n'.repeat(1500)}`, '/b/bundle.yaml');
        } catch (error) {
          return error;
        }
      })(),
      'MAX_YAML_TOKENS',
      '/b/bundle.yaml',
    );
  });
});

describe('hardening: depth and size limits where recursion or expansion happens', () => {
  test('parseAgent: 10,000 nested tags are refused with the file, the line and the limit', async () => {
    const text = `<agent name="A" title="T">\n<persona><role>${'<x>'.repeat(10_000)}deep${'</x>'.repeat(10_000)}</role></persona>\n</agent>\n`;
    const { outcome, ms } = await timed(() => parseAgent(text, '/b/agents/deep.md'));
    expect(ms).toBeLessThan(2000);
    expectLimit(outcome, 'MAX_XML_DEPTH', '/b/agents/deep.md');
    expect(outcome).toMatchObject({ line: 2 });
    // 60 levels are fine.
    const ok = `<agent name="A" title="T"><persona><role>${'<x>'.repeat(60)}deep${'</x>'.repeat(60)}</role></persona></agent>`;
    expect(parseAgent(ok, '/b/agents/ok.md').persona.role).toBe('deep');
  });

  test('parseAgent: a very long persona, action or file is refused naming the field, the file and the limit', () => {
    const persona = sourceAgent().replace('Warm and brief.', 'w'.repeat(100_000));
    expectLimit(
      catching(() => parseAgent(persona, '/b/agents/alex.md')),
      'MAX_AGENT_TEXT_CHARS',
      '/b/agents/alex.md',
    );
    expect(catching(() => parseAgent(persona, '/b/agents/alex.md'))).toMatchObject({ field: 'persona.communication_style' });
    const action = sourceAgent([`Load ${'a'.repeat(100_000)}`]);
    expect(catching(() => parseAgent(action, '/b/agents/alex.md'))).toMatchObject({ limit: 'MAX_AGENT_TEXT_CHARS', field: 'criticalActions[0]' });
    const huge = `${sourceAgent()}\n${'x'.repeat(300_000)}`;
    expectLimit(
      catching(() => parseAgent(huge, '/b/agents/alex.md')),
      'MAX_AGENT_CHARS',
      '/b/agents/alex.md',
    );
    // Many lines in one text (once a stack overflow in the indentation step) are fine under the limit.
    expect(parseAgent(sourceAgent([`Remember${'\n  x'.repeat(7000)}`]), '/b/agents/alex.md').criticalActions[0]).toHaveLength(8 + 7000 * 2);
  });

  test('resolveConfigVariables: a 5,000-link variable chain stops at the depth limit instead of overflowing', async () => {
    const chain: Record<string, string> = { v5000: 'end' };
    for (let i = 0; i < 5000; i++) chain[`v${i}`] = `{v${i + 1}}`;
    const { outcome, ms } = await timed(() => resolveConfigVariables(chain, {}));
    expect(ms).toBeLessThan(2000);
    expect(outcome).toMatchObject({ name: 'LimitExceededError', limit: 'MAX_VARIABLE_DEPTH' });
    // In a config file the error names the file.
    const config = `user_name: B\n${Array.from({ length: 1000 }, (_, i) => `v${i}: '{v${i + 1}}'`).join('\n')}\nv1000: end\n`;
    const { error, configFile } = await initWithConfig(config);
    expectLimit(error.cause, 'MAX_VARIABLE_DEPTH', configFile);
    // Chains of ordinary length still resolve.
    const short = { a: '{b}/a', b: '{c}/b', c: '{d}/c', d: '/root' };
    expect(resolveConfigVariables(short, {}).a).toBe('/root/c/b/a');
  });

  test('variables: a doubling bomb stops at the expansion limit instead of building 134 million characters', async () => {
    const levels: Record<string, string> = { b0: 'xxxx' };
    for (let i = 0; i < 30; i++) levels[`b${i + 1}`] = `{b${i}}{b${i}}`;
    const { outcome, ms } = await timed(() => resolveVariables('{b30}', levels));
    expect(ms).toBeLessThan(2000);
    expect(outcome).toMatchObject({ name: 'LimitExceededError', limit: 'MAX_VARIABLE_EXPANSION_CHARS' });
    const config = `user_name: B\nb0: xxxx\n${Array.from({ length: 30 }, (_, i) => `b${i + 1}: '{b${i}}{b${i}}'`).join('\n')}\n`;
    const { error, configFile } = await initWithConfig(config);
    expectLimit(error.cause, 'MAX_VARIABLE_EXPANSION_CHARS', configFile);
  });
});

describe('hardening: every error names its file', () => {
  test('loadWorkflow: an unknown variable in the workflow path or in its instructions names the workflow', async () => {
    const { context, file } = await withWorkflow('name: w\ninstructions: "{nowhere}/instructions.md"\n');
    const inPath = await resolveWorkflow('{nowhere}/workflows/w/workflow.yaml', context).catch((e: unknown) => e);
    expect(inPath).toMatchObject({ name: 'ConfigVariableNotFoundError', file: '{nowhere}/workflows/w/workflow.yaml' });
    expect((inPath as Error).message).toContain('{nowhere}/workflows/w/workflow.yaml');
    const inField = await loadWorkflow(file, context).catch((e: unknown) => e);
    expect(inField).toMatchObject({ name: 'ConfigVariableNotFoundError', file, field: 'instructions' });
    expect((inField as Error).message).toContain(file);
  });

  test('a self-referencing output_folder names its file: in config.yaml, in workflow.yaml, in a config_source', async () => {
    const { error, configFile } = await initWithConfig("user_name: B\noutput_folder: '{output_folder}/docs'\n");
    expect(error.cause).toMatchObject({ name: 'VariableCycleError', file: configFile });
    expect(error.message).toContain('Variable cycle: output_folder -> output_folder');
    expect(error.message).toContain(configFile);
    expect(error.file).toBe(path.join(path.dirname(configFile), 'agents/alex.md'));

    const { context, file } = await withWorkflow("name: w\noutput_folder: '{output_folder}/docs'\n");
    const inWorkflow = await resolveWorkflow(file, context).catch((e: unknown) => e);
    expect(inWorkflow).toMatchObject({ name: 'VariableCycleError', file });
    expect((inWorkflow as Error).message).toContain(file);

    const configSource = path.join(path.dirname(file), 'wf-config.yaml');
    await writeTree(path.dirname(file), {
      'workflow.yaml': 'name: w\nconfig_source: "{installed_path}/wf-config.yaml"\nout: "{config_source}:output_folder"\n',
      'wf-config.yaml': "output_folder: '{output_folder}/docs'\n",
    });
    const inConfigSource = await resolveWorkflow(file, context).catch((e: unknown) => e);
    expect(inConfigSource).toMatchObject({ name: 'VariableCycleError', file: configSource });
    expect((inConfigSource as Error).message).toContain(configSource);
  });
});

function catching(fn: () => unknown): unknown {
  try {
    return fn();
  } catch (error) {
    return error;
  }
}
