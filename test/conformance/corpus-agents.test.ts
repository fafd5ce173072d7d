/**
 * Conformance against the real BMAD files in ../shared/corpus/bmad (read only): every agent file
 * of both versions parses with its name, title and command count, and every agent of the installed
 * alpha.5 tree initialises (a missing file it names is a warning; with strict, a typed error).
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseAgent } from '../../bundle/agent-parser';
import { loadBundle } from '../../bundle/bundle-loader';
import { AgentParseError, BundleError, CriticalActionError } from '../../bundle/errors';
import { initializeAgent } from '../../bundle/initialize-agent';
import { CORPUS, corpusPresent } from '../support/corpus';

// Real path: the runtime reports symlink-resolved paths, and shared/ may be reached through a link.
const ALPHA0 = path.join(CORPUS, 'v6.0.0-alpha.0/src');
const ALPHA5 = path.join(CORPUS, 'v6.0.0-alpha.5');
const present = corpusPresent('corpus-agents', ['v6.0.0-alpha.0/src', 'v6.0.0-alpha.5/bmad']);

/** Every `.md` file directly inside a folder named `agents`, below `root`. */
function agentFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.md') && path.basename(dir) === 'agents') out.push(full);
    }
  };
  walk(root);
  return out.sort();
}

/** Command elements counted independently of the parser. */
function countCommandElements(text: string): number {
  return (text.match(/<(?:c|item)\s/g) ?? []).length;
}

const describeCorpus = present ? describe : describe.skip;
const title = 'corpus-agents';

describeCorpus(title, () => {
  const files = present ? [...agentFiles(ALPHA0), ...agentFiles(path.join(ALPHA5, 'bmad'))] : [];

  test('corpus-agents: the corpus holds agents of both dialects', () => {
    expect(files.filter((f) => f.startsWith(ALPHA0)).length).toBeGreaterThanOrEqual(10);
    expect(files.filter((f) => f.startsWith(ALPHA5)).length).toBeGreaterThanOrEqual(15);
  });

  test.each(files.map((f) => [path.relative(CORPUS, f), f]))('corpus-agents: %s parses with name, title and commands', (_rel, file) => {
    const text = readFileSync(file, 'utf8');
    if (!/<agent[\s>]/.test(text)) {
      // A README kept in an agents folder: not an agent, and the parser says so.
      expect(() => parseAgent(text, file)).toThrow(AgentParseError);
      expect(() => parseAgent(text, file)).toThrow('missing <agent> element');
      return;
    }
    const agent = parseAgent(text, file);
    expect(agent.name.trim()).not.toBe('');
    expect(agent.title.trim()).not.toBe('');
    expect(agent.commands.length).toBe(countCommandElements(text));
    expect(agent.commands.length).toBeGreaterThan(0);
    expect(agent.dialect).toBe(file.startsWith(ALPHA5) ? 'compiled' : 'source');
    expect(agent.criticalActions.length).toBeGreaterThan(0);
    for (const command of agent.commands) expect(command.cmd).toMatch(/\S/);
  });

  test('corpus-agents: every installed alpha.5 agent initialises or fails with a typed BundleError', async () => {
    const bundle = await loadBundle(ALPHA5);
    expect(bundle.kind).toBe('installed');
    const outcomes: Record<string, string> = {};
    for (const entry of bundle.agents) {
      const id = `${entry.module}/${entry.id}`;
      let result: Awaited<ReturnType<typeof initializeAgent>> | undefined;
      try {
        result = await initializeAgent({ bundlePath: ALPHA5, agentId: id, date: '2025-11-04' });
      } catch (error) {
        // Anything but a typed bundle error (a TypeError, say) fails the test here.
        expect(error).toBeInstanceOf(BundleError);
        outcomes[id] = (error as Error).name;
        continue;
      }
      const { agent, messages, context } = result;
      expect(messages[0].content.startsWith(`You are ${agent.name}, ${agent.title}.`)).toBe(true);
      expect(messages.some((m) => m.content.startsWith('[Critical Action] Loaded file: '))).toBe(true);
      expect(context.configPath).toBe(path.join(ALPHA5, 'bmad', entry.module as string, 'config.yaml'));
      // config keys are resolved in the instructions that follow the config load
      const instructions = messages.filter((m) => m.content.startsWith('[Critical Instruction]'));
      for (const m of instructions) expect(m.content).not.toMatch(/\{user_name\}|\{communication_language\}/);
      expect(context.variables.output_folder).toBe(path.join(ALPHA5, 'docs'));
      outcomes[id] = 'ok';
    }
    expect(Object.keys(outcomes)).toHaveLength(15);
    // Even the one known broken agent (its standards file path points at the source tree) starts.
    expect(Object.values(outcomes).filter((o) => o === 'ok')).toHaveLength(15);
  });

  test('corpus-agents: the tech-writer starts with a warning for its missing standards file; strict fails naming the instruction and ENOENT', async () => {
    const standards = path.join(ALPHA5, 'src/modules/bmm/workflows/techdoc/documentation-standards.md');
    const { messages, warnings, context } = await initializeAgent({ bundlePath: ALPHA5, agentId: 'tech-writer' });
    expect(warnings).toEqual([`Critical action: could not load ${standards} (not found)`]);
    expect(messages).toContainEqual({ role: 'system', content: `[Critical Action] Could not load file: ${standards} (not found)` });
    expect(context.configPath).toBe(path.join(ALPHA5, 'bmad/bmm/config.yaml'));
    const error = await initializeAgent({ bundlePath: ALPHA5, agentId: 'tech-writer', strict: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CriticalActionError);
    expect((error as Error).message).toMatch(/^Critical action failed: CRITICAL: Load COMPLETE file \{project-root\}\/src\/modules\/.*\nError: ENOENT: no such file or directory/);
  });
});
