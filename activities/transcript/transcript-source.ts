/**
 * Reading a session's transcript from the session itself, page by page, through its
 * `transcriptPage` query. Used by the model call when the worker's copy misses, and by the
 * `loadTranscriptPage` activity that fills a run continued from an earlier one. Always from a
 * normal activity: a local activity blocks the workflow task that would answer the query.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { TranscriptPageRequest } from '../../common/activity-types';
import type { TranscriptPage } from '../../common/transcript';
import { transcriptPageQuery } from '../../common/contract/session-definitions';
import type { TranscriptPageSource } from './transcript-cache';

/** Runs followed back at most, for messages a run does not hold (each run continued from the one before). */
const MAX_EARLIER_RUNS = 10_000;

/**
 * A page source that queries the session run through `client`. Messages a run does not hold (its
 * gap) are read from the run it points to, and so on back.
 */
export function queryTranscriptSource(client: Client): TranscriptPageSource {
  return async (ref, from, to, maxBytes) => {
    let runId = ref.runId;
    let end = to;
    for (let hop = 0; hop < MAX_EARLIER_RUNS; hop++) {
      const page = await client.workflow.getHandle(ref.workflowId, runId).query(transcriptPageQuery, from, maxBytes, end);
      if (!page.earlier) return page;
      runId = page.earlier.runId;
      end = Math.min(end, page.earlier.to);
    }
    throw new Error(`Messages from ${from} of session ${ref.workflowId} were not found within ${MAX_EARLIER_RUNS} runs`);
  };
}

/** The `loadTranscriptPage` activity over `source`. */
export function createLoadTranscriptPage(source: TranscriptPageSource): (input: TranscriptPageRequest) => Promise<TranscriptPage> {
  return async (input) => {
    Context.current().heartbeat();
    return source({ workflowId: input.workflowId, runId: input.runId }, input.from, input.to, input.maxBytes);
  };
}
