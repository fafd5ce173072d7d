/**
 * A one-shot session for every BMAD v6 source agent of the corpus (`src/**\/agents/*.agent.yaml`),
 * on one Temporal dev server for the file, a real worker and the fake OpenAI-compatible model: the
 * source tree is pointed at (compiled in memory with its installer templates), the installed tree
 * next to it is the project (its config.yaml is what the activation step loads). Each session
 * completes, and the model's first request carries the compiled persona, activation steps and menu.
 */
import { promises as fs, readdirSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readAgentFile } from '../../bundle/agent-file';
import { text } from '../../fake-model/server';
import { CORPUS, corpusPresent } from '../support/corpus';
import { type SessionHarness, startSessionHarness } from '../support/session-harness';

const ALPHA5 = path.join(CORPUS, 'v6.0.0-alpha.5');
const present = corpusPresent('source-agent-sessions', ['v6.0.0-alpha.5/src', 'v6.0.0-alpha.5/bmad']);
const describeCorpus = present ? describe : describe.skip;

/** `<module>/<id>` of every source agent of the corpus. */
function sourceIds(): string[] {
  const ids: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.agent.yaml') && path.basename(dir) === 'agents') {
        ids.push(`${path.basename(path.dirname(dir))}/${entry.name.slice(0, -'.agent.yaml'.length)}`);
      }
    }
  };
  walk(path.join(ALPHA5, 'src'));
  return ids.sort();
}

let h: SessionHarness;
let loopwright: Awaited<ReturnType<SessionHarness['startWorker']>>['loopwright'];
let project: string;

describeCorpus('source-agent-sessions', () => {
  const ids = present ? sourceIds() : [];

  beforeAll(async () => {
    // A copy: a session's project may be written to (the corpus is read only).
    project = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'lw-source-sessions-')));
    await fs.cp(path.join(ALPHA5, 'bmad'), path.join(project, 'bmad'), { recursive: true });
    await fs.cp(path.join(ALPHA5, 'src'), path.join(project, 'src'), { recursive: true });
    h = await startSessionHarness();
    ({ loopwright } = await h.startWorker());
  }, 180_000);

  afterAll(async () => {
    await h?.close();
    if (project) await fs.rm(project, { recursive: true, force: true });
  });

  beforeEach(() => h.fake.reset());

  test('source-agent-sessions: the corpus holds the twelve sources', () => {
    expect(ids).toHaveLength(12);
  });

  test.each(ids.map((id) => [id]))(
    'source-agent-sessions: %s runs a one-shot session with its compiled persona and menu',
    async (id) => {
      const src = path.join(project, 'src');
      const [module, name] = id.split('/');
      const file = path.join(src, module === 'core' ? 'core' : `modules/${module}`, 'agents', `${name}.agent.yaml`);
      const { agent } = await readAgentFile(file, src);
      h.fake.enqueue(text(`Hello, this is ${agent.name}.`));

      const session = await loopwright.start({ bundlePath: src, agentId: id, projectRoot: project, firstMessage: '*help', oneShot: true });
      const result = await session.result();
      expect(result).toMatchObject({ turns: 1, endedBy: 'one_shot', lastTurn: { success: true, response: `Hello, this is ${agent.name}.` } });

      expect(h.fake.requests).toHaveLength(1);
      const messages = h.fake.requests[0].body!.messages!;
      const system = messages[0];
      expect(system.role).toBe('system');
      const prompt = system.content ?? '';
      expect(prompt.startsWith(`You are ${agent.name}, ${agent.title}.`)).toBe(true);
      for (const part of Object.values(agent.persona)) if (part !== '') expect(prompt).toContain(part);
      for (const command of agent.commands) expect(prompt).toContain(`${command.cmd} - ${command.description}`);
      expect(agent.commands[0].cmd).toBe('*help');
      expect(agent.commands[agent.commands.length - 1].cmd).toBe('*exit');
      // the installer's rules and handlers, from the tree's templates
      expect(prompt).toContain('RULES:\n- ALWAYS communicate in {communication_language}');
      for (const handler of agent.menuHandlers) expect(prompt).toContain(`[${handler.type}]\n${handler.text}`);
      // the activation step loaded the module config of the project's installed tree
      expect(messages).toContainEqual({ role: 'system', content: expect.stringContaining(`Loaded file: ${path.join(project, 'bmad', module, 'config.yaml')}`) });
      expect(messages[messages.length - 1]).toEqual({ role: 'user', content: '*help' });
    },
    60_000,
  );
});
