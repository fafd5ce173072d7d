/**
 * Conformance: every agent of every installed tree that can be built from the real BMAD files
 * (../shared/corpus/bmad, read only) inspects without a stack trace: `loopwright inspect` shows it
 * (exit 0), in text and as JSON, and lists what is wrong with it as warnings. The trees are copies
 * in temp folders:
 * - alpha.5: the installed `bmad/` tree as shipped;
 * - alpha.5 with src: the same, next to the `src/` tree (a development checkout);
 * - alpha.0: the source tree laid out as the installer would (`bmad/core`, `bmad/<module>`), with
 *   no config.yaml (the source tree ships none), so every config load is a missing file.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadBundle } from '../../bundle/bundle-loader';
import { inspectCommand } from '../../cli/commands/inspect';
import { CORPUS, corpusPresent } from '../support/corpus';

const ALPHA5 = path.join(CORPUS, 'v6.0.0-alpha.5');
const ALPHA0_SRC = path.join(CORPUS, 'v6.0.0-alpha.0/src');
const present = corpusPresent('corpus-inspect', ['v6.0.0-alpha.5/bmad', 'v6.0.0-alpha.0/src']);
const describeCorpus = present ? describe : describe.skip;

/** What one inspect printed. */
interface Run {
  status: number;
  logs: string;
  errors: string;
}

async function inspect([bundle, agent, ...flags]: string[]): Promise<Run> {
  const logs: string[] = [];
  const errors: string[] = [];
  const status = await inspectCommand(bundle, agent, { json: flags.includes('--json') }, { log: (s) => logs.push(s), error: (s) => errors.push(s) });
  return { status, logs: logs.join('\n'), errors: errors.join('\n') };
}

/** A JSON inspection, as far as this test reads it. */
interface Inspection {
  agent: { name: string; title: string };
  commands: { cmd: string }[];
  messages: { role: string; content: string }[];
  systemPrompt: string;
  warnings: string[];
  sessionWouldStart: boolean;
}

let tmp: string;

/** The trees, by name: the folder to inspect. */
const trees: Record<string, string> = {};

describeCorpus('corpus-inspect', () => {
  beforeAll(async () => {
    tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'loopwright-corpus-inspect-')));
    const a5 = path.join(tmp, 'alpha5');
    await fs.cp(path.join(ALPHA5, 'bmad'), path.join(a5, 'bmad'), { recursive: true });
    trees.alpha5 = a5;

    const a5src = path.join(tmp, 'alpha5-src');
    await fs.cp(path.join(ALPHA5, 'bmad'), path.join(a5src, 'bmad'), { recursive: true });
    await fs.cp(path.join(ALPHA5, 'src'), path.join(a5src, 'src'), { recursive: true });
    trees['alpha5-src'] = a5src;

    const a0 = path.join(tmp, 'alpha0');
    await fs.cp(path.join(ALPHA0_SRC, 'core'), path.join(a0, 'bmad/core'), { recursive: true });
    for (const module of await fs.readdir(path.join(ALPHA0_SRC, 'modules'))) {
      await fs.cp(path.join(ALPHA0_SRC, 'modules', module), path.join(a0, 'bmad', module), { recursive: true });
    }
    trees.alpha0 = a0;
  });

  afterAll(async () => {
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  });

  test('corpus-inspect: every agent of every tree inspects, in text and JSON, without a stack trace', async () => {
    const seen: Record<string, { warnings: string[]; starts: boolean }> = {};
    for (const [name, tree] of Object.entries(trees)) {
      const bundle = await loadBundle(tree);
      expect(bundle.kind).toBe('installed');
      expect(bundle.agents.length).toBeGreaterThanOrEqual(name === 'alpha0' ? 10 : 15);
      for (const entry of bundle.agents) {
        const id = `${entry.module}/${entry.id}`;
        const text = await inspect([tree, id]);
        expect({ id, name, status: text.status, errors: text.errors }).toEqual({ id, name, status: 0, errors: '' });
        expect(text.logs).toMatch(/^Agent: /);
        expect(text.logs).toContain('----- [1] system: system prompt');
        expect(text.logs).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);

        const json = await inspect([tree, id, '--json']);
        expect(json.status).toBe(0);
        const data = JSON.parse(json.logs) as Inspection;
        expect(data.agent.name.trim()).not.toBe('');
        expect(data.commands.length).toBeGreaterThan(0);
        expect(data.systemPrompt).toBe(data.messages[0].content);
        if (data.warnings.length > 0) expect(text.logs).toContain(`Warnings (${data.warnings.length}):`);
        for (const warning of data.warnings) expect(text.logs).toContain(`  ! ${warning}`);
        seen[`${name}:${id}`] = { warnings: data.warnings, starts: data.sessionWouldStart };
      }
    }

    // alpha.5: the tech-writer names a standards file that the installed tree lacks; it still starts.
    const standards = (tree: string) => path.join(tree, 'src/modules/bmm/workflows/techdoc/documentation-standards.md');
    for (const name of ['alpha5', 'alpha5-src']) {
      const writer = seen[`${name}:bmm/tech-writer`];
      expect(writer.starts).toBe(true);
      expect(writer.warnings).toContain(`Critical action: could not load ${standards(trees[name])} (not found)`);
      // Every other critical action of the installed tree loads or instructs cleanly.
      const critical = Object.entries(seen)
        .filter(([key]) => key.startsWith(`${name}:`))
        .flatMap(([key, s]) => s.warnings.filter((w) => w.startsWith('Critical')).map((w) => `${key}: ${w}`));
      expect(critical).toEqual([`${name}:bmm/tech-writer: Critical action: could not load ${standards(trees[name])} (not found)`]);
    }
    // alpha.0 ships no config.yaml: each agent's config load is a missing file, and the variables
    // it would have set do not resolve, but every agent would still start.
    const alpha0 = Object.entries(seen).filter(([key]) => key.startsWith('alpha0:'));
    const loadsConfig = alpha0.filter(([, s]) => s.warnings.some((w) => /^Critical action: could not load .*config\.yaml \(not found\)$/.test(w)));
    expect(loadsConfig.length).toBeGreaterThanOrEqual(9);
    for (const [, s] of loadsConfig) expect(s.warnings.some((w) => w.startsWith('Critical instruction: variable {'))).toBe(true);
    // No refusal anywhere in the corpus: every session would start.
    expect(Object.entries(seen).filter(([, s]) => !s.starts)).toEqual([]);
  }, 120_000);
});
