/**
 * Reading a session's past from Temporal: where a turn ended (for rewind and branch), across the
 * runs a session continued through, and the transcript queries' "still loading" answer.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { ChatMessage } from '../common/messages';
import type { TurnResult } from '../common/session-types';
import { TRANSCRIPT_PAGE_BYTES } from '../common/transcript';
import { TRANSCRIPT_LOADING, TURN_END_MEMO, transcriptPageQuery } from '../common/contract/session-definitions';

/** Where a turn ended: the run, that run's history, the event's index and the turn's result (its `turn` and `messageRange` at least). */
export interface TurnEnd {
  runId: string;
  events: temporal.api.history.v1.IHistoryEvent[];
  ended: { index: number; result: Pick<TurnResult, 'turn' | 'messageRange'> };
}

/**
 * Where turn `turn` of the session `workflow` ended. Runs are searched newest first, following the
 * session's own line of runs back (the run each one continued from; runs a rewind left behind are
 * not on it). A turn ended through `send` (or `awaitTurn`) is found by its update's result, a first
 * message or a turn resumed in a new run by the mark the session leaves in its memo. Undefined when
 * it ended in none.
 */
export async function findTurnEnd(client: Client, workflow: WorkflowHandle, turn: number): Promise<TurnEnd | undefined> {
  const converter = client.options.loadedDataConverter.payloadConverter;
  let runId: string | null | undefined = (await workflow.describe()).runId;
  while (runId) {
    const history: temporal.api.history.v1.IHistory = await client.workflow.getHandle(workflow.workflowId, runId).fetchHistory();
    const events: temporal.api.history.v1.IHistoryEvent[] = history.events ?? [];
    for (const [index, event] of events.entries()) {
      const payload = event.workflowExecutionUpdateCompletedEventAttributes?.outcome?.success?.payloads?.[0];
      const marked = event.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields?.[TURN_END_MEMO];
      const found = payload ? converter.fromPayload(payload) : marked ? converter.fromPayload(marked) : undefined;
      const result = found as Pick<TurnResult, 'turn' | 'messageRange'> | undefined;
      if (result?.turn === turn && result.messageRange) return { runId, events, ended: { index, result } };
    }
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
  }
  return undefined;
}

/** Ask again while the session's new run is still paging its transcript in (a moment, at most about 30 s). */
export async function whileLoading<T>(ask: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await ask();
    } catch (err) {
      if (attempt >= 120 || !(err instanceof Error) || !err.message.includes(TRANSCRIPT_LOADING)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * Messages `[from, to)` (to the end without `to`) of the session run `workflow` names, page by page.
 * Messages a run does not hold (its gap: it continued from a compacted run) are read from the run
 * it points to, and so on back.
 */
export async function readTranscript(client: Client, workflow: WorkflowHandle, from: number, to?: number): Promise<ChatMessage[]> {
  const messages: ChatMessage[] = [];
  let next = from;
  for (;;) {
    const page = await whileLoading(() => workflow.query(transcriptPageQuery, next, TRANSCRIPT_PAGE_BYTES, to));
    const end = to ?? page.total;
    if (page.earlier) {
      const upTo = Math.min(page.earlier.to, end);
      messages.push(...(await readTranscript(client, client.workflow.getHandle(workflow.workflowId, page.earlier.runId), next, upTo)));
      next = upTo;
    } else {
      messages.push(...page.messages);
      next = page.from + page.messages.length;
      if (page.messages.length === 0) return messages;
    }
    if (next >= end) return messages;
  }
}
