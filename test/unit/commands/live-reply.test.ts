/**
 * The live printer of `chat` and `run` (cli/commands/live-reply.ts) over a scripted event stream:
 * reply text as it comes, and a running command's output as whole lines under a bar, a line split
 * across two events shown once whole, the last partial line when the call ends.
 */
import type { SessionEvent } from '../../../client/session-events';
import { startLiveReply } from '../../../cli/commands/live-reply';

function session(events: SessionEvent[]) {
  return {
    async *follow() {
      for (const event of events) yield event;
    },
  };
}

test('command output is shown line by line under a bar; reply text is written as it comes', async () => {
  const written: string[] = [];
  const notices: string[] = [];
  const live = startLiveReply(
    session([
      { type: 'text', turn: 1, reply: 1, offset: 0, text: 'Running it.' },
      { type: 'reply_done', turn: 1, reply: 1, toolCalls: [{ id: 'c1', name: 'run_command' }] },
      { type: 'tool_output', turn: 1, id: 'c1', name: 'run_command', text: 'line one\nline t', bytes: 15 },
      { type: 'tool_output', turn: 1, id: 'c1', name: 'run_command', text: 'wo\nhalf', bytes: 22 },
      { type: 'tool_finished', turn: 1, id: 'c1', name: 'run_command', success: true },
      { type: 'text', turn: 1, reply: 2, offset: 0, text: 'Done.' },
      { type: 'reply_done', turn: 1, reply: 2, toolCalls: [] },
      { type: 'turn_ended', turn: 1, result: { turn: 1, status: 'completed' } as never },
    ]),
    { write: (t) => written.push(t), notice: (l) => notices.push(l), before: () => undefined },
  );
  await live.stop();
  expect(notices).toEqual(['  │ line one', '  │ line two', '  │ half']);
  expect(written.join('')).toBe('Running it.\nDone.\n');
  expect(live.showed('Done.')).toBe(true);
});
