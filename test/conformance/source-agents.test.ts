/**
 * Conformance: the BMAD v6.0.0-alpha.5 sources (`src/**\/agents/*.agent.yaml`, read only) against
 * their installed compilations (`bmad/<module>/agents/<name>.md`). For every source with an
 * installed form, Loopwright builds the same system prompt, the same opening messages (critical
 * actions run with the same project) and the same commands from either.
 *
 * The normalisation is narrow, and only what `agent-yaml.ts` documents as remaining:
 * - `file` and `dialect` (`yaml` against `compiled`): where each came from;
 * - `checklist` and `document` of validate-workflow commands: the source has them, the installer
 *   drops them (the system prompt never shows them, so the prompts are compared as they are).
 * Nothing is normalised for `_cfg/agents/*.customize.yaml`: every one in this corpus is empty.
 *
 * Then every source lists, inspects and validates from the source tree, and
 * `inspect <corpus>/v6.0.0-alpha.5/src/modules/bmm pm` finds the agent.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { readAgentFile } from '../../bundle/agent-file';
import type { AgentDefinition } from '../../bundle/agent-schema';
import { loadBundle } from '../../bundle/bundle-loader';
import { initializeAgent } from '../../bundle/initialize-agent';
import { inspectBundle } from '../../bundle/inspect';
import { checkBundle, type Problem } from '../../bundle/validate';
import { inspectCommand } from '../../cli/commands/inspect';
import { CORPUS, corpusPresent } from '../support/corpus';

const ALPHA5 = path.join(CORPUS, 'v6.0.0-alpha.5');
const SRC = path.join(ALPHA5, 'src');
const present = corpusPresent('source-agents', ['v6.0.0-alpha.5/src', 'v6.0.0-alpha.5/bmad']);
const describeCorpus = present ? describe : describe.skip;

/** A source agent of the corpus: its file, module (the folder holding `agents/`) and id. */
interface Source {
  file: string;
  module: string;
  id: string;
  /** Its installed compilation, when the corpus has one. */
  installed?: string;
}

function sources(): Source[] {
  const out: Source[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.agent.yaml') && path.basename(dir) === 'agents') {
        const module = path.basename(path.dirname(dir));
        const id = entry.name.slice(0, -'.agent.yaml'.length);
        const installed = path.join(ALPHA5, 'bmad', module, 'agents', `${id}.md`);
        out.push({ file: full, module, id, ...(existsFile(installed) ? { installed } : {}) });
      }
    }
  };
  walk(SRC);
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

function existsFile(file: string): boolean {
  try {
    return readdirSync(path.dirname(file)).includes(path.basename(file));
  } catch {
    return false;
  }
}

/** The documented differences removed (see the module comment). */
function normalised(agent: AgentDefinition): Omit<AgentDefinition, 'file' | 'dialect'> {
  const { file: _file, dialect: _dialect, ...rest } = agent;
  return { ...rest, commands: agent.commands.map(({ checklist: _c, document: _d, ...command }) => command) };
}

describeCorpus('source-agents', () => {
  const all = present ? sources() : [];
  const paired = all.filter((s) => s.installed !== undefined);

  test('source-agents: the corpus holds the twelve sources, each with its installed compilation', () => {
    expect(all).toHaveLength(12);
    expect(paired).toHaveLength(12);
  });

  test.each(paired.map((s) => [`${s.module}/${s.id}`, s]))('source-agents: %s compiles to what the installed agent parses to', async (_id, s) => {
    const source = await readAgentFile(s.file, SRC);
    const installed = await readAgentFile(s.installed as string, path.join(ALPHA5, 'bmad'));
    expect(source.agent.dialect).toBe('yaml');
    expect(installed.agent.dialect).toBe('compiled');
    // the installer's templates of the tree were used
    expect(source.files.some((f) => f.endsWith(path.join('utility', 'models', 'fragments', 'activation-steps.xml')))).toBe(true);
    expect(normalised(source.agent)).toEqual(normalised(installed.agent));
    // the items keep what the installer dropped: one checklist and one document per line of the source naming one
    const text = readFileSync(s.file, 'utf8');
    expect(source.agent.commands.filter((c) => c.checklist !== undefined)).toHaveLength((text.match(/^\s+checklist:/gm) ?? []).length);
    expect(source.agent.commands.filter((c) => c.document !== undefined)).toHaveLength((text.match(/^\s+document:/gm) ?? []).length);
  });

  test.each(paired.map((s) => [`${s.module}/${s.id}`, s]))('source-agents: %s starts with the same system prompt, messages and commands as its installed form', async (id, s) => {
    const date = '2025-11-04';
    const fromSource = await initializeAgent({ bundlePath: SRC, agentId: id, projectRoot: ALPHA5, date });
    const fromInstalled = await initializeAgent({ bundlePath: ALPHA5, agentId: id, date });
    expect(fromSource.agent.file).toBe(s.file);
    expect(fromSource.messages[0].content).toBe(fromInstalled.messages[0].content);
    expect(fromSource.messages).toEqual(fromInstalled.messages);
    expect(fromSource.warnings).toEqual(fromInstalled.warnings);
    expect(fromSource.agent.commands.map(({ checklist: _c, document: _d, ...c }) => c)).toEqual(fromInstalled.agent.commands);
    expect(fromSource.context.variables).toEqual({ ...fromInstalled.context.variables, 'bundle-root': SRC, 'core-root': path.join(SRC, 'core') });
  });

  test('source-agents: the source tree lists every source, from src/, a module or core', async () => {
    const bundle = await loadBundle(SRC);
    expect(bundle.kind).toBe('source');
    expect(bundle.agents.map((a) => `${a.module}/${a.id}`).sort()).toEqual(all.map((s) => `${s.module}/${s.id}`).sort());
    for (const agent of bundle.agents) {
      expect(agent.file.endsWith('.agent.yaml')).toBe(true);
      expect(agent.name?.trim()).toBeTruthy();
      expect(agent.title?.trim()).toBeTruthy();
    }
    expect((await loadBundle(path.join(SRC, 'modules/bmm'))).module).toBe('bmm');
    expect((await loadBundle(path.join(SRC, 'core'))).module).toBe('core');
  });

  test('source-agents: every source inspects', async () => {
    for (const s of all) {
      const inspection = await inspectBundle(SRC, `${s.module}/${s.id}`);
      expect(inspection.agent.dialect).toBe('yaml');
      expect(inspection.agent.file).toBe(s.file);
      expect(inspection.systemPrompt.startsWith(`You are ${inspection.agent.name}, ${inspection.agent.title}.`)).toBe(true);
    }
  }, 60_000);

  test('source-agents: the source tree validates with the same problems as the installed tree, agent for agent', async () => {
    const fromSource = await checkBundle(SRC, { projectRoot: ALPHA5 });
    const fromInstalled = await checkBundle(ALPHA5);
    expect(fromSource.checked.agents).toBe(all.length);
    expect(fromSource.warnings).toEqual([]);
    // No parse error in any source (an AgentParseError has a field `agent...` or `line n`).
    expect(fromSource.problems.filter((p) => /^(agent|line )/.test(p.field))).toEqual([]);
    const byAgent = (problems: Problem[], suffix: string) => {
      const out: Record<string, string[]> = {};
      for (const p of problems) {
        if (!p.file.endsWith(suffix)) continue;
        const key = p.file.replace(/^(modules\/)?([^/]+)\/agents\/([^/.]+).*$/, '$2/$3');
        (out[key] ??= []).push(`${p.field}: ${p.message.replace(/\nFile: .*$/, '')}`);
      }
      return out;
    };
    const installedAgents = byAgent(fromInstalled.problems, '.md');
    const sourceAgents = byAgent(fromSource.problems, '.agent.yaml');
    expect(Object.keys(sourceAgents)).toContain('bmm/tech-writer');
    for (const key of all.map((x) => `${x.module}/${x.id}`)) {
      expect({ key, problems: sourceAgents[key] }).toEqual({ key, problems: installedAgents[key] });
    }
  }, 120_000);

  test('source-agents: inspect <corpus>/v6.0.0-alpha.5/src/modules/bmm pm finds the agent', async () => {
    const logs: string[] = [];
    const errors: string[] = [];
    const status = await inspectCommand(path.join(SRC, 'modules/bmm'), 'pm', { json: false }, { log: (s) => logs.push(s), error: (s) => errors.push(s) });
    expect({ status, errors: errors.join('\n') }).toEqual({ status: 0, errors: '' });
    expect(logs.join('\n')).toMatch(/^Agent: .*John, Product Manager/);
    expect(logs.join('\n')).toContain('(yaml dialect)');
    // The installed tree beside src/ is the project: its config loads, and a session would start.
    const inspection = await inspectBundle(path.join(SRC, 'modules/bmm'), 'pm');
    expect(inspection.context.projectRoot).toBe(ALPHA5);
    expect(inspection.context.configPath).toBe(path.join(ALPHA5, 'bmad/bmm/config.yaml'));
    expect(inspection.sessionWouldStart).toBe(true);
    // A validate-workflow item keeps the checklist and document its source names (the verify phase uses them).
    expect(inspection.commands.find((c) => c.cmd === '*validate-prd')).toMatchObject({
      checklist: '{project-root}/bmad/bmm/workflows/2-plan-workflows/prd/checklist.md',
      document: '{output_folder}/PRD.md',
    });
    expect(logs.join('\n')).toContain('checklist: {project-root}/bmad/bmm/workflows/2-plan-workflows/prd/checklist.md');
  });
});
