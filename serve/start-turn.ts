/**
 * Sending a message without waiting for the turn: the `send` update is started and the call
 * returns once the session accepted it (its validator passed: not busy, not too large, not ending),
 * with the number of the turn it runs. The turn goes on in the session whoever waits for it; its
 * progress is on the event stream and its result comes from `awaitTurn`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { sendUpdate } from '../common/contract/session-definitions';
import type { SessionHandle } from '../client/session-client';
import { checkMessageSize, continuedTurn, rejection, workflowTaskFailed } from '../client/session-errors';

/** How long a message is offered to a session that is moving to its next run. */
const HANDOVER_MS = 60_000;

/** How long a refusal may take to show in the update's result (it is known locally; decoding it takes microseconds). */
const REFUSAL_SHOWS_MS = 25;

/** Whether `result` settles at once: it throws the refusal; false when it does not settle (the turn runs). */
async function refused(client: Client, result: () => Promise<unknown>): Promise<boolean> {
  const abort = new AbortController();
  const settled = client.withAbortSignal(abort.signal, result).then(() => true);
  const timer = sleep(REFUSAL_SHOWS_MS, false);
  try {
    return await Promise.race([settled, timer]);
  } finally {
    abort.abort();
    settled.catch(() => undefined);
  }
}

/** Start a turn for `message`; resolves to its number once the session took the message. */
export async function startTurn(session: SessionHandle, client: Client, message: string): Promise<number> {
  checkMessageSize(message);
  const deadline = Date.now() + HANDOVER_MS;
  for (;;) {
    // The turn a message starts is the next one: while a turn runs (or waits for the agent to be
    // ready) the session refuses another message, so no other turn can come between.
    const before = (await session.state()).turn;
    try {
      const update = await session.workflow.startUpdate(sendUpdate, { args: [message], waitForStage: 'ACCEPTED' });
      // A refusal comes back as the update's known outcome, not as an error of startUpdate: it
      // shows at once in result(). An accepted turn's result would wait for the turn; that wait is
      // cancelled.
      if (await refused(client, () => update.result())) throw new Error('unreachable: a refusal throws');
      return before + 1;
    } catch (err) {
      const moved = continuedTurn(err);
      if (moved?.turn !== undefined) return moved.turn;
      // Not taken, so the turn is still the next one: the run was handing over (offer the message to
      // the next run), or the workflow task that carried it failed (a history host lost, say).
      const pause = moved !== undefined ? 50 : workflowTaskFailed(err) ? 100 : undefined;
      if (pause !== undefined && Date.now() < deadline) {
        await sleep(pause);
        continue;
      }
      throw rejection(err);
    }
  }
}
