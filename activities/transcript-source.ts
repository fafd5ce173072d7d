/**
 * Reading a session's transcript from the session itself, page by page, through its
 * `transcriptPage` query. Used by the model call when the worker's copy misses, and by the
 * `loadTranscriptPage` activity that fills a run continued from an earlier one. Always from a
 * normal activity: a local activity blocks the workflow task that would answer the query.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { TranscriptPageRequest } from '../common/activity-types';
import type { TranscriptPage } from '../common/transcript';
import { transcriptPageQuery } from '../workflows/definitions';
import type { TranscriptPageSource } from './model/transcript-cache';

/** A page source that queries the session run through `client`. */
export function queryTranscriptSource(client: Client): TranscriptPageSource {
  return (ref, from, to, maxBytes) => client.workflow.getHandle(ref.workflowId, ref.runId).query(transcriptPageQuery, from, maxBytes, to);
}

/** The `loadTranscriptPage` activity over `source`. */
export function createLoadTranscriptPage(source: TranscriptPageSource): (input: TranscriptPageRequest) => Promise<TranscriptPage> {
  return async (input) => {
    Context.current().heartbeat();
    return source({ workflowId: input.workflowId, runId: input.runId }, input.from, input.to, input.maxBytes);
  };
}
