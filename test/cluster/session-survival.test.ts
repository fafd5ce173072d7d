/**
 * Sessions survive the cluster: on a real Temporal cluster (PostgreSQL, frontend, two history
 * hosts, matching, worker; scripts/cluster), long turns go on while a history host is lost and
 * comes back, while the frontend restarts and while PostgreSQL crashes and restarts, and a session
 * continues as new across lost history hosts. Each fault strikes while the model calls of several
 * sessions are held open, and the held replies are let go while the part is still down, so their
 * completions meet the outage. Nothing is lost, no model call is made twice, and every session ends
 * as it does on a healthy server.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { ChatMessage } from '../../common/messages';
import { Client } from '@temporalio/client';
import { LoopwrightClient, type SessionHandle } from '../../client/session-client';
import type { TurnSummary } from '../../common/session-types';
import { type RecordedRequest, type Step, text, toolCalls } from '../../fake-model/server';
import { type ClusterHarness, startClusterHarness } from '../support/cluster-harness';
import { copyExampleBundle } from '../support/session-harness';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(300_000);

const BIN = path.resolve(__dirname, '../../bin/loopwright.js');

let h: ClusterHarness;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let loopwright: Awaited<ReturnType<ClusterHarness['startWorker']>>['loopwright'];
const processes: WorkerProcess[] = [];

/** Model calls each session asked for, by the session's tag: the call numbers, in arrival order. */
const calls = new Map<string, number[]>();

/** Replies held until the test lets them go: call number -> the promise they wait on. */
const holds = new Map<number, Promise<void>>();

/** A gate a held reply waits at. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * A deterministic model: the user message `loop=<tag> iterations=<n>` asks for n calls, each but
 * the last reading a bundle file, so a turn is a chain of model calls and tool calls. The answer
 * depends on the request alone (a repeated call would get the same one); every call is counted
 * by tag and number, and a call whose number has a hold waits for it.
 */
async function responder(request: RecordedRequest): Promise<Step> {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const match = /loop=(\S+) iterations=(\d+)/.exec(String(messages[lastUser]?.content ?? ''));
  if (!match) return text('no loop asked for');
  const [, tag, iterations] = match;
  const call = messages.slice(lastUser).filter((m) => m.role === 'assistant').length + 1;
  calls.set(tag, [...(calls.get(tag) ?? []), call]);
  await holds.get(call);
  if (call >= Number(iterations)) return text(`done ${tag} after ${call} calls`);
  return toolCalls([{ id: `call_${tag}_${call}`, name: 'read_file', arguments: { file_path: '{bundle-root}/workflows/intake/template.md' } }]);
}

/** Resolves once every tag has asked for call `n` (its reply is then held, if `n` has a hold). */
async function allReached(tags: readonly string[], n: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!tags.every((tag) => calls.get(tag)?.includes(n))) {
    if (Date.now() > deadline) throw new Error(`not every session reached model call ${n}: ${JSON.stringify(Object.fromEntries(calls))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The turn's outcome: the `send` update's answer, or, when the update call itself did not outlive
 * the outage (a client call may fail while the frontend is down), the session's own record of the
 * turn once it has one.
 */
async function outcome(session: SessionHandle, turn: Promise<unknown>, number: number): Promise<TurnSummary | undefined> {
  const answer = await turn.catch(() => undefined);
  if (answer !== undefined) return answer as TurnSummary;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const state = await session.state().catch(() => undefined);
    if (state?.lastTurn?.turn === number) return state.lastTurn;
    if (Date.now() > deadline) return state?.lastTurn;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Resolves once every session answers a query again: its shard has an owner that serves it. */
async function answering(sessions: SessionHandle[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const session of sessions) {
    while (
      !(await session.state().then(
        () => true,
        () => false,
      ))
    ) {
      if (Date.now() > deadline) throw new Error(`session ${session.workflowId} did not answer within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** The roles of a turn of n calls: the user message, n-1 (assistant, tool) pairs, the answer. */
function turnRoles(n: number): string[] {
  return [
    'user',
    ...Array<string[]>(n - 1)
      .fill(['assistant', 'tool'])
      .flat(),
    'assistant',
  ];
}

/**
 * Runs `sessions` long turns of `iterations` calls; at each fault's call number the replies are
 * held, the fault strikes, the replies are let go, the part comes back. Then checks that every
 * turn ended as on a healthy server, with each call made exactly once, and that the session still
 * takes a turn.
 */
async function longTurns(
  name: string,
  options: {
    sessions: number;
    iterations: number;
    /** At call `at`: `down` strikes, the held replies go out, `up` (when given) brings the part back. */
    faults: { at: number; down(sessions: SessionHandle[]): Promise<void> | void; up?(): Promise<void> | void }[];
    /** Brings back what the faults left down, once the turns and the next ones are over. */
    restore?(): Promise<void>;
    extra?: Record<string, unknown>;
    /** The client to start sessions with (default: the in-process worker's queue on the default namespace). */
    client?: LoopwrightClient;
  },
): Promise<SessionHandle[]> {
  const tags = Array.from({ length: options.sessions }, (_, i) => `${name}-${i}`);
  const gates = options.faults.map((fault) => {
    const g = gate();
    holds.set(fault.at, g.promise);
    return g;
  });
  const sessions = await Promise.all(tags.map(() => (options.client ?? loopwright).start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', ...options.extra })));
  const turns = sessions.map((session, i) => session.send(`loop=${tags[i]} iterations=${options.iterations}`));
  // Unhandled while a fault is under way would fail the test file; `outcome` reads them after.
  for (const turn of turns) turn.catch(() => undefined);
  for (const [i, fault] of options.faults.entries()) {
    await allReached(tags, fault.at);
    await fault.down(sessions);
    // The held replies go out while the part is down: their completions meet the outage.
    gates[i].open();
    await fault.up?.();
  }
  const results = await Promise.all(sessions.map((session, i) => outcome(session, turns[i], 1)));
  holds.clear();
  for (const [i, tag] of tags.entries()) {
    expect(results[i]).toMatchObject({ turn: 1, success: true, status: 'completed', iterations: options.iterations, response: `done ${tag} after ${options.iterations} calls` });
    // Each model call once: none lost (the turn would not have ended), none repeated.
    expect(calls.get(tag)).toEqual(Array.from({ length: options.iterations }, (_, k) => k + 1));
    const transcript = await sessions[i].messages();
    const roles = transcript.map((m) => m.role);
    expect(roles.slice(roles.indexOf('user'))).toEqual(turnRoles(options.iterations));
  }
  // The sessions go on after the fault.
  const next = await Promise.all(sessions.map((session, i) => session.send(`loop=${tags[i]}-next iterations=2`)));
  for (const [i, result] of next.entries()) expect(result).toMatchObject({ success: true, iterations: 2, response: `done ${tags[i]}-next after 2 calls`, turn: 2 });
  await options.restore?.();
  return sessions;
}

beforeAll(async () => {
  h = await startClusterHarness();
  bundleCopy = copyExampleBundle();
  h.fake.setResponder(responder);
  ({ loopwright } = await h.startWorker(`cluster-${process.pid}`));
}, 1_800_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill('SIGKILL')));
  await h?.close();
  bundleCopy?.cleanup();
});

test('cluster: long turns go on while each history host in turn is killed and restarted', async () => {
  const sessions = await longTurns('history', {
    sessions: 4,
    iterations: 8,
    // Both hosts, one after the other: whichever owns a session's shard is lost while its call is out.
    faults: [
      { at: 3, down: () => h.cluster.stopProcess('history-1', 'SIGKILL'), up: () => h.cluster.startProcess('history-1') },
      { at: 6, down: () => h.cluster.stopProcess('history-2', 'SIGKILL'), up: () => h.cluster.startProcess('history-2') },
    ],
  });
  for (const session of sessions) await session.end();
});

test('cluster: long turns go on while the frontend is killed and restarted', async () => {
  const sessions = await longTurns('frontend', {
    sessions: 4,
    iterations: 6,
    faults: [{ at: 3, down: () => h.cluster.stopProcess('frontend', 'SIGKILL'), up: () => h.cluster.startProcess('frontend') }],
  });
  for (const session of sessions) await session.end();
});

test('cluster: long turns go on while PostgreSQL crashes and restarts', async () => {
  const sessions = await longTurns('postgres', {
    sessions: 4,
    iterations: 6,
    faults: [{ at: 3, down: () => h.cluster.stopPostgres('immediate'), up: () => h.cluster.startPostgres() }],
  });
  for (const session of sessions) await session.end();
});

test('cluster: a session continues as new across the loss of a history host, and its transcript runs through every run', async () => {
  const [session] = await longTurns('continue', {
    sessions: 1,
    iterations: 14,
    // About four iterations fill a run: the session has moved on before the first loss and moves on again after each.
    extra: { continueAsNew: { maxHistoryEvents: 40 } },
    faults: [
      // history-1 is lost and stays away: its shards move to history-2 once the membership finds it gone (seconds).
      // The held reply goes out once the session answers again, so its completion is not retried past the SDK's budget.
      {
        at: 6,
        down: async (sessions) => {
          await h.cluster.stopProcess('history-1', 'SIGKILL');
          await answering(sessions);
        },
      },
      // history-1 comes back and history-2, by now the owner of every shard, is lost: the session's shard must move.
      {
        at: 10,
        down: async (sessions) => {
          await h.cluster.startProcess('history-1');
          await h.cluster.stopProcess('history-2', 'SIGKILL');
          await answering(sessions);
        },
      },
    ],
    restore: () => h.cluster.startProcess('history-2'),
  });
  const state = await session.state();
  expect(state.run).toBeGreaterThanOrEqual(3);
  expect(state.turn).toBe(2);
  // The runs form one chain under one id, listed by the cluster's SQL visibility.
  const runs = new Set<string>();
  for await (const execution of h.client.workflow.list({ query: `WorkflowId = '${session.workflowId}'` })) runs.add(execution.runId);
  expect(runs.size).toBe(state.run);
  await session.end();
});

test('cluster: a namespace set up by loopwright setup-namespace serves a loopwright worker process through a frontend restart', async () => {
  const namespace = `agents-${process.pid}`;
  const env = { ...process.env, TEMPORAL_ADDRESS: h.cluster.address, TEMPORAL_NAMESPACE: namespace };
  const setUp = (): Record<string, unknown> => JSON.parse(execFileSync(process.execPath, [BIN, 'setup-namespace', '--json', '--retention', '1'], { env, encoding: 'utf8' })) as Record<string, unknown>;
  const names = ['LoopwrightAgent', 'LoopwrightBundle', 'LoopwrightStatus', 'LoopwrightTurns', 'LoopwrightTotalTokens'];
  expect(setUp()).toMatchObject({ address: h.cluster.address, namespace, created: true, added: names, present: [] });
  // Idempotent: a second run finds everything there.
  expect(setUp()).toMatchObject({ created: false, added: [], present: names });
  const described = await h.connection.workflowService.describeNamespace({ namespace });
  expect(Number(described.config?.workflowExecutionRetentionTtl?.seconds)).toBe(86_400);

  // A worker as users run it, in its own process, found through the same variables.
  const taskQueue = `cluster-process-${process.pid}`;
  processes.push(
    await startWorkerProcess({ TEMPORAL_ADDRESS: h.cluster.address, TEMPORAL_NAMESPACE: namespace, LOOPWRIGHT_TASK_QUEUE: taskQueue, OPENAI_BASE_URL: h.fake.baseURL, OPENAI_API_KEY: 'test-key' }),
  );
  const client = new LoopwrightClient(new Client({ connection: h.connection, namespace }), taskQueue);
  const [session] = await longTurns('process', {
    sessions: 1,
    iterations: 5,
    client,
    faults: [{ at: 2, down: () => h.cluster.stopProcess('frontend', 'SIGKILL'), up: () => h.cluster.startProcess('frontend') }],
  });
  // The session upserted its search attributes in the new namespace: listed by agent and turns.
  const query = `LoopwrightAgent = 'facilitator' AND LoopwrightTurns >= 2 AND WorkflowId = '${session.workflowId}'`;
  const found: string[] = [];
  for (let i = 0; i < 200 && found.length === 0; i++) {
    for await (const w of client.client.workflow.list({ query })) found.push(w.workflowId);
    if (found.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(found).toEqual([session.workflowId]);
  await session.end();
});

test('cluster: the search attributes of the set-up step work with the SQL visibility store (list by agent and turns)', async () => {
  const session = await loopwright.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator' });
  await session.send('loop=listed iterations=1');
  // Visibility is written after the fact: wait until the list shows the session.
  const query = `LoopwrightAgent = 'facilitator' AND LoopwrightTurns >= 1 AND WorkflowId = '${session.workflowId}'`;
  let found: string[] = [];
  for (let i = 0; i < 200 && found.length === 0; i++) {
    found = [];
    for await (const w of h.client.workflow.list({ query })) found.push(w.workflowId);
    if (found.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(found).toEqual([session.workflowId]);
  await session.end();
});
