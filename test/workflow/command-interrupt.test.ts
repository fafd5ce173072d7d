/**
 * A running command in a session, on the dev server and the real sandbox: its output reaches a
 * reader of `follow()` while it runs (`tool_output` events, from the activity's heartbeats, so not
 * in history), and an interrupt ends the command with every process it started (one in the
 * background that ignores SIGTERM too): the turn ends `interrupted`, no process of it remains, and
 * the history holds the result once, bounded.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { SessionEvent } from '../../client/session-events';
import type { SessionState } from '../../common/session-types';
import type { LoopwrightClient, SessionHandle } from '../../client/session-client';
import { text, toolCalls } from '../../fake-model/server';
import { processesWithMarker } from '../unit/commands-sandbox/sandbox-fixture';
import { copyExampleBundle, type SessionHarness, startSessionHarness } from '../support/session-harness';

jest.setTimeout(60_000);

let h: SessionHarness;
let lw: LoopwrightClient;
let copy: ReturnType<typeof copyExampleBundle>;

beforeAll(async () => {
  h = await startSessionHarness();
  lw = (await h.startWorker()).loopwright;
  copy = copyExampleBundle('lw-command-interrupt-');
  fs.chmodSync(copy.root, 0o755);
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', '65534:65534', copy.bundle]);
}, 120_000);

afterAll(async () => {
  await h?.close();
  copy?.cleanup();
});

beforeEach(() => h.fake.reset());

async function waitForState(session: SessionHandle, test: (s: SessionState) => boolean): Promise<SessionState> {
  for (let i = 0; i < 400; i++) {
    const state = await session.state();
    if (test(state)) return state;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('state never matched');
}

/** Every payload of a history as text (payload data are bytes), with the rest of its JSON. */
function historyText(history: unknown): string {
  const parts: string[] = [];
  const walk = (node: unknown): void => {
    if (node instanceof Uint8Array) parts.push(Buffer.from(node).toString('utf8'));
    else if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === 'object') Object.values(node).forEach(walk);
    else parts.push(String(node));
  };
  walk(history);
  return parts.join('\n');
}

test("a command's output reaches follow() while it runs; an interrupt ends it and everything it started", async () => {
  const marker = `lw-interrupt-${process.pid}-${Date.now()}`;
  // Prints a line every 100 ms; a child in the background ignores SIGTERM and sleeps on.
  const line = `(trap '' TERM; exec -a ${marker}-bg sleep 300) & for i in $(seq 1 600); do echo "tick $i ${marker}"; sleep 0.1; done`;
  h.fake.enqueue(toolCalls([{ id: 'call_long', name: 'run_command', arguments: { command: line } }]), text('unused'));
  const session = await lw.start({ bundlePath: copy.bundle, agentId: 'facilitator', commands: { enabled: true } });
  const events: SessionEvent[] = [];
  const abort = new AbortController();
  const following = (async () => {
    for await (const event of session.follow({ signal: abort.signal })) events.push(event);
  })();
  const turn = session.send('run the long command');
  // A line with a substitution and a subshell waits for a person whatever the rules.
  await waitForState(session, (s) => s.pendingApprovals.length > 0);
  await session.approve('call_long');
  // Output arrives while the command runs, with the call it belongs to.
  for (let i = 0; i < 400 && !events.some((e) => e.type === 'tool_output' && e.text.includes('tick 3')); i++) await new Promise((r) => setTimeout(r, 25));
  const outputs = events.filter((e): e is Extract<SessionEvent, { type: 'tool_output' }> => e.type === 'tool_output');
  expect(outputs.length).toBeGreaterThan(0);
  expect(outputs.every((e) => e.id === 'call_long' && e.name === 'run_command')).toBe(true);
  const shown = outputs.map((e) => e.text).join('');
  expect(shown).toContain(`tick 1 ${marker}\n`);
  expect(shown).toContain(`tick 3 ${marker}\n`);
  // Bytes only grow, and no text is shown twice.
  expect(outputs.map((e) => e.bytes)).toEqual([...outputs.map((e) => e.bytes)].sort((a, b) => a - b));
  expect(shown.match(/tick 1 /g)).toHaveLength(1);
  expect((await processesWithMarker(`${marker}-bg`)).length).toBeGreaterThan(0);

  await session.interrupt('stop it');
  await expect(turn).resolves.toMatchObject({ status: 'interrupted' });
  abort.abort();
  await following;
  // Nothing the command started is left: the loop and the SIGTERM-proof sleeper are gone.
  for (let i = 0; i < 100 && (await processesWithMarker(marker)).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  expect(await processesWithMarker(marker)).toEqual([]);
  // History has no heartbeat text: the output is in no event but the call's own (interrupted) result, if any.
  expect(historyText(await session.workflow.fetchHistory())).not.toContain('tick 3');
  const state = await waitForState(session, (s) => s.status === 'waiting_for_user' || s.status === 'interrupted');
  expect(state.runningTools).toEqual([]);
  await session.end();
});
