/**
 * Adversarial inputs for the scanners of critical actions added for "Read" lines and single-variable
 * load targets: each must finish in linear time (well under `BOUND_MS` here, where a quadratic scan
 * of these inputs takes seconds), and a bundle naming thousands of files that cannot be loaded
 * gets a bounded number of messages and warnings.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseAgent } from '../../../bundle/agent-parser';
import { loadBundle } from '../../../bundle/bundle-loader';
import { fileLoadTargets, isFilePathValue, MAX_REPORTED_LOAD_PROBLEMS, processCriticalActions } from '../../../bundle/critical-actions';
import { CriticalActionError, LimitExceededError } from '../../../bundle/errors';
import { pathVariables } from '../../../bundle/variables';
import { makeBundle, makeTempDir, sourceAgent } from '../bundle/fixtures';

const BOUND_MS = 1000;

function timed<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: performance.now() - start };
}

describe('critical-action scanning stays linear on adversarial input', () => {
  const cases: [string, string, string[]][] = [
    ['many filler words', `Read ${'the '.repeat(50_000)}x.md`, ['x.md']],
    ['one huge filler-like word', `Read ${'*'.repeat(100_000)}`, []],
    ['fillers then prose', `Read ${'COMPLETE '.repeat(50_000)}request`, []],
    ['many quotes', `Read ${'`'.repeat(100_000)}x`, []],
    ['many joined files', `Read ${'{a}/x.md and '.repeat(20_000)}`, ['{a}/x.md']],
    ['many comma-joined files', `Read ${'{a}/x.md,'.repeat(20_000)}`, ['{a}/x.md']],
    ['a long dotted run', `Read ${'a.'.repeat(50_000)}`, []],
    ['a long path', `Read ${'a/'.repeat(50_000)}b.md`, [`${'a/'.repeat(50_000)}b.md`]],
    ['a variable then dots', `Read {a}${'.'.repeat(100_000)}x`, [`{a}${'.'.repeat(100_000)}x`]],
    ['a long label', `${'A '.repeat(50_000)}: Read x.md`, ['x.md']],
    ['many "and"', `Read x.md ${'and '.repeat(50_000)}`, ['x.md']],
    ['many braces', `Read ${'{'.repeat(100_000)}`, []],
    ['many unclosed variables', `Load ${'{a'.repeat(50_000)}`, []],
  ];
  test.each(cases)('fileLoadTargets: %s', (_name, instruction, expected) => {
    const { value, ms } = timed(() => fileLoadTargets(instruction, {}));
    expect(value).toEqual(expected);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  test('fileLoadTargets: thousands of single variables resolve within one expansion budget', () => {
    // Each {bN} doubles the one before: {b19} alone expands to 1,572,864 characters (over the limit).
    const vars: Record<string, string> = { b0: 'xxx' };
    for (let i = 1; i <= 19; i++) vars[`b${i}`] = `{b${i - 1}}{b${i - 1}}`;
    const many = Array.from({ length: 5000 }, (_, i) => `{b${i % 18}}`).join(' ');
    const { value, ms } = timed(() => {
      try {
        return fileLoadTargets(`Load ${many} {b18} {b17} {b16} {b15}`, vars);
      } catch (error) {
        return error;
      }
    });
    expect(value).toBeInstanceOf(LimitExceededError);
    expect(ms).toBeLessThan(BOUND_MS);
    const unknown = Array.from({ length: 5000 }, (_, i) => `{v${i}}`).join(' ');
    const run = timed(() => fileLoadTargets(`Load ${unknown}`, {}));
    expect(run.value).toHaveLength(5000);
    expect(run.ms).toBeLessThan(BOUND_MS);
  });

  test('isFilePathValue: a 1 MiB value is judged at once', () => {
    const { value, ms } = timed(() => [isFilePathValue(`/${'a '.repeat(500_000)}.md`), isFilePathValue('a'.repeat(1 << 20)), isFilePathValue('.'.repeat(1 << 20))]);
    expect(value).toEqual([true, false, false]);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  test('processCriticalActions: thousands of files that cannot be loaded give at most MAX_REPORTED_LOAD_PROBLEMS messages', async () => {
    const tmp = await makeTempDir();
    try {
      // Six actions (each under MAX_AGENT_TEXT_CHARS) naming 500 unknown variables and 500 missing files each.
      const actions = Array.from({ length: 6 }, (_, a) => {
        const names = Array.from({ length: 500 }, (_, i) => `{v${a}_${i}} {bundle-root}/m${a}_${i}.md`);
        return `Load ${names.join(' ')}`;
      });
      const root = await makeBundle(path.join(tmp, 'b'), { agent: sourceAgent(actions) });
      const bundle = await loadBundle(root);
      const agentFile = path.join(root, 'agents/alex.md');
      const agent = parseAgent(await fs.readFile(agentFile, 'utf8'), agentFile);
      const variables = pathVariables({ bundleRoot: bundle.bundleRoot, coreRoot: bundle.coreRoot, projectRoot: bundle.projectRoot });
      const start = performance.now();
      const result = await processCriticalActions(agent, { bundle, agentFile, variables });
      expect(performance.now() - start).toBeLessThan(10_000);
      expect(result.warnings).toHaveLength(MAX_REPORTED_LOAD_PROBLEMS + 1);
      expect(result.warnings[MAX_REPORTED_LOAD_PROBLEMS]).toBe(`Critical action: ${6000 - MAX_REPORTED_LOAD_PROBLEMS} more problem(s) not listed`);
      expect(result.messages).toHaveLength(MAX_REPORTED_LOAD_PROBLEMS + 1);
      await expect(processCriticalActions(agent, { bundle, agentFile, variables, strict: true })).rejects.toBeInstanceOf(CriticalActionError);
    } finally {
      await fs.rm(tmp, { recursive: true, force: true });
    }
  }, 30_000);
});
