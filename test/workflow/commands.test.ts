/**
 * Commands in a session, on the dev server and the real sandbox: a session with commands on offers
 * `run_command` (its definition and its rule in the prompt; a session without them offers neither);
 * every call waits for a person's yes whatever the approval policy, with the exact command line in
 * the approval; approved, it runs in the sandbox with the path variables filled in and its output
 * becomes the call's result; denied, nothing runs. Command rules: the session's allow rules let a
 * command run at once, its deny rules refuse one without asking (naming the rule), any other waits
 * with its line, folder and sandbox; the bundle's deny rules refuse, its allow rules are requests
 * the approval names; a worker's rules apply to every session it starts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import type { ChatMessage, ToolMessage } from '../../common/messages';
import type { SessionState } from '../../common/session-types';
import type { SessionHandle } from '../../client/session-client';
import { text, toolCalls } from '../../fake-model/server';
import { copyExampleBundle, type SessionHarness } from '../support/session-harness';
import type { LoopwrightClient } from '../../client/session-client';
import { type FakeLane, type FakeLanes, type LaneHarness, startLaneHarness } from '../support/fake-lanes';

jest.setTimeout(60_000);

let h: SessionHarness;
let suite: LaneHarness | undefined;
/** Each test's own copy of the example bundle, script and requests on the shared fake model (the tests run side by side). */
let lanes: FakeLanes;
let lw: LoopwrightClient;

beforeAll(async () => {
  suite = await startLaneHarness();
  ({ h, lanes, loopwright: lw } = suite);
}, 120_000);

afterAll(async () => {
  await suite?.close();
});

/**
 * Run as root, the sandbox runs a command as the project's owner, or nobody when that is root:
 * the project (`bundle`, in `root`) belongs to nobody here, as a user's project would belong to that user.
 */
function ownedByNobody(root: string, bundle: string): void {
  fs.chmodSync(root, 0o755);
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', '65534:65534', bundle]);
}

/** A lane whose copy of the example bundle is owned as a user's project would be. */
function openLane(): FakeLane {
  const lane = lanes.open();
  ownedByNobody(path.dirname(lane.bundle), lane.bundle);
  return lane;
}

async function waitForState(session: SessionHandle, test: (s: SessionState) => boolean): Promise<SessionState> {
  for (let i = 0; i < 400; i++) {
    const state = await session.state();
    if (test(state)) return state;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('state never matched');
}

function resultOf(messages: ChatMessage[], id: string): Record<string, unknown> {
  const message = messages.find((m): m is ToolMessage => m.role === 'tool' && m.tool_call_id === id);
  if (!message) throw new Error(`no result for ${id}`);
  return JSON.parse(message.content) as Record<string, unknown>;
}

const COMMAND = { id: 'call_cmd', name: 'run_command', arguments: { command: 'echo made > {output_folder}/from-command.txt && cat {project-root}/config.yaml | head -c 12' } };

test.concurrent('without commands on, run_command is neither offered nor in the prompt', async () => {
  const m = openLane();
  m.enqueue(text('Hello.'));
  const session = await lw.start({ bundlePath: m.bundle, agentId: 'facilitator' });
  await session.send('hi');
  const request = m.requests[0]!.body!;
  expect((request.tools ?? []).map((t) => t.function.name)).not.toContain('run_command');
  expect(JSON.stringify(request.messages)).not.toContain('run_command');
  await session.end();
});

test.concurrent('with commands on, a command waits for a yes (policy none), runs in the sandbox once approved, and its output is the result', async () => {
  const m = openLane();
  m.enqueue(toolCalls([COMMAND]), text('Ran it.'));
  const session = await lw.start({ bundlePath: m.bundle, agentId: 'facilitator', commands: { enabled: true } });
  const turn = session.send('run the command');
  const waiting = await waitForState(session, (s) => s.pendingApprovals.length > 0);
  expect(waiting.pendingApprovals).toEqual([expect.objectContaining({ callId: 'call_cmd', tool: 'run_command', path: expect.stringContaining('from-command.txt && cat ') })]);
  // The approval shows the command with its variables filled in.
  expect(waiting.pendingApprovals[0]!.path).toContain(path.join(m.bundle, 'config.yaml'));
  const first = m.requests[0]!.body!;
  expect((first.tools ?? []).map((t) => t.function.name)).toContain('run_command');
  expect(String(first.messages![0]!.content)).toContain('call the run_command tool');
  expect(fs.existsSync(path.join(m.bundle, 'docs', 'from-command.txt'))).toBe(false);

  await session.approve('call_cmd');
  await expect(turn).resolves.toMatchObject({ success: true, response: 'Ran it.' });
  const result = resultOf(await session.messages(), 'call_cmd');
  expect(result).toMatchObject({ success: true, exitCode: 0, sandboxed: true, stdout: fs.readFileSync(path.join(m.bundle, 'config.yaml'), 'utf8').slice(0, 12) });
  expect(fs.readFileSync(path.join(m.bundle, 'docs', 'from-command.txt'), 'utf8')).toBe('made\n');
  await session.end();
});

test.concurrent('a denied command does not run; the model is told the user declined it', async () => {
  const m = openLane();
  const marker = { id: 'call_no', name: 'run_command', arguments: { command: 'touch {output_folder}/denied.txt' } };
  m.enqueue(toolCalls([marker]), text('Understood.'));
  const session = await lw.start({ bundlePath: m.bundle, agentId: 'facilitator', commands: { enabled: true } });
  const turn = session.send('try it');
  await waitForState(session, (s) => s.pendingApprovals.length > 0);
  await session.deny('call_no', 'not now');
  await expect(turn).resolves.toMatchObject({ success: true, response: 'Understood.' });
  expect(resultOf(await session.messages(), 'call_no')).toEqual({ success: false, declined: true, error: 'The user declined this call: not now' });
  expect(fs.existsSync(path.join(m.bundle, 'docs', 'denied.txt'))).toBe(false);
  await session.end();
});

describe('command rules', () => {
  test.concurrent('an allowed command runs without approval, a denied one is refused without asking (naming the rule), any other waits and shows its line, folder and sandbox', async () => {
    const m = openLane();
    const allowed = { id: 'call_ok', name: 'run_command', arguments: { command: 'touch {output_folder}/allowed.txt' } };
    const denied = { id: 'call_rm', name: 'run_command', arguments: { command: 'touch {output_folder}/x.txt && rm -rf {output_folder}' } };
    const other = { id: 'call_ask', name: 'run_command', arguments: { command: 'ls -a', cwd: 'docs/../docs' } };
    m.enqueue(toolCalls([allowed, denied, other]), text('Done.'));
    const session = await lw.start({
      bundlePath: m.bundle,
      agentId: 'facilitator',
      commands: { enabled: true, allow: ['touch {output_folder}/*', 'ls {project-root}'], deny: ['rm'] },
    });
    const turn = session.send('run them');
    const waiting = await waitForState(session, (s) => s.pendingApprovals.length > 0);
    // Only the command no rule covers waits; the allowed one has run meanwhile.
    expect(waiting.pendingApprovals.map((p) => p.callId)).toEqual(['call_ask']);
    const docs = path.join(m.bundle, 'docs');
    expect(waiting.pendingApprovals[0]!.command).toEqual({
      line: 'ls -a',
      cwd: docs,
      sandbox: `bubblewrap: project read-only, writable ${docs}; network off; ends after 120 s`,
    });
    await waitForState(session, () => fs.existsSync(path.join(docs, 'allowed.txt')));
    await session.approve('call_ask');
    await expect(turn).resolves.toMatchObject({ success: true, response: 'Done.' });

    const messages = await session.messages();
    expect(resultOf(messages, 'call_ok')).toMatchObject({ success: true, exitCode: 0, sandboxed: true });
    expect(resultOf(messages, 'call_rm')).toEqual({
      success: false,
      refused: true,
      command: `touch ${docs}/x.txt && rm -rf ${docs}`,
      error: `Refused without asking: ${JSON.stringify(`rm -rf ${docs}`)} is covered by the deny rule "rm" (the session's commands.deny). The command did not run.`,
    });
    expect(fs.existsSync(path.join(docs, 'x.txt'))).toBe(false);
    expect(resultOf(messages, 'call_ask')).toMatchObject({ success: true, exitCode: 0, stdout: expect.stringContaining('allowed.txt') });
    // The decisions were the rules': the history records the patch that guards them.
    const history = await session.workflow.fetchHistory();
    const patches = (history.events ?? [])
      .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
      .map((e) => JSON.parse(Buffer.from(e.markerRecordedEventAttributes!.details!['patch-data']!.payloads![0]!.data!).toString('utf8')) as { id: string });
    expect(patches.map((p) => p.id)).toContain('loopwright-command-rules');
    await session.end();
    // And the history the rules made replays against the same code.
    await expect(Worker.runReplayHistory({ workflowBundle: h.workflowBundle }, await session.workflow.fetchHistory(), 'command-rules')).resolves.toBeUndefined();
  });

  test.concurrent("the bundle's deny rules refuse without asking; its allow rules are requests the approval names, never grants", async () => {
    const project = copyExampleBundle('lw-command-rules-');
    try {
      fs.appendFileSync(path.join(project.bundle, 'bundle.yaml'), 'commands:\n  allow: ["touch {output_folder}/*"]\n  deny: ["git push"]\n');
      ownedByNobody(project.root, project.bundle);
      const m = lanes.open(project.root);
      const requested = { id: 'call_touch', name: 'run_command', arguments: { command: 'touch {output_folder}/requested.txt' } };
      const push = { id: 'call_push', name: 'run_command', arguments: { command: 'git push origin main' } };
      m.enqueue(toolCalls([requested, push]), text('Ok.'));
      const session = await lw.start({ bundlePath: project.bundle, agentId: 'facilitator', commands: { enabled: true } });
      const turn = session.send('go');
      const waiting = await waitForState(session, (s) => s.pendingApprovals.length > 0);
      expect(waiting.pendingApprovals.map((p) => p.callId)).toEqual(['call_touch']);
      expect(waiting.pendingApprovals[0]!.command?.requestedBy).toEqual([`"touch {output_folder}/*" (the bundle's commands.allow in bundle.yaml)`]);
      await session.deny('call_touch', 'not today');
      await expect(turn).resolves.toMatchObject({ success: true });
      const messages = await session.messages();
      expect(resultOf(messages, 'call_touch')).toMatchObject({ declined: true });
      expect(resultOf(messages, 'call_push')).toMatchObject({ refused: true, error: expect.stringContaining(`"git push" (the bundle's commands.deny in bundle.yaml)`) });
      await session.end();
    } finally {
      project.cleanup();
    }
  });

  test.concurrent("a worker's rules apply to every session it starts: its allow lets a command run, its deny refuses one, approved or not", async () => {
    const m = openLane();
    const operated = await h.startWorker({ activities: { commandRules: { allow: ['touch {output_folder}/*'], deny: ['cat'] } } });
    try {
      const touch = { id: 'call_w1', name: 'run_command', arguments: { command: 'touch {output_folder}/by-worker.txt' } };
      const cat = { id: 'call_w2', name: 'run_command', arguments: { command: 'cat config.yaml' } };
      m.enqueue(toolCalls([touch, cat]), text('Fine.'));
      const session = await operated.loopwright.start({ bundlePath: m.bundle, agentId: 'facilitator', commands: { enabled: true } });
      await expect(session.send('go')).resolves.toMatchObject({ success: true, response: 'Fine.' });
      const messages = await session.messages();
      expect(resultOf(messages, 'call_w1')).toMatchObject({ success: true, exitCode: 0 });
      expect(fs.existsSync(path.join(m.bundle, 'docs', 'by-worker.txt'))).toBe(true);
      expect(resultOf(messages, 'call_w2')).toMatchObject({ refused: true, error: expect.stringContaining(`"cat" (this worker's --deny-command)`) });
      await session.end();
    } finally {
      await operated.stop();
    }
  });
});
