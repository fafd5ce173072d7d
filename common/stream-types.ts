/**
 * Live output: what a model call that streams its reply makes visible while it runs. The model
 * activity puts the reply so far into its heartbeat details (`ModelStreamProgress`), batched about
 * every 100 ms; Temporal keeps only the latest heartbeat of a running activity, outside history,
 * and shows it to any client (`describe()`, pending activities). So the stream reaches readers in
 * other processes and hosts with Temporal as the only thing in between, history does not grow with
 * the number of tokens, and the reply's final text is recorded once, in the activity's result, as
 * without streaming. A retried call (a worker died mid-stream) starts again from nothing with a new
 * `attempt`: readers drop what the old attempt showed. Pure data: every layer imports it.
 */

/** Marks heartbeat details as stream progress (other heartbeats carry other things, or nothing). */
export const STREAM_PROGRESS_KIND = 'loopwright.stream';

/** The reply of one model call so far, as its latest heartbeat carries it. */
export interface ModelStreamProgress {
  kind: typeof STREAM_PROGRESS_KIND;
  /** The activity attempt that is streaming; a higher one means the text starts again. */
  attempt: number;
  /** How many batches this attempt has sent (readers can tell a new batch from a repeated describe). */
  seq: number;
  /** The reply's text so far (redacted like the final reply), at most `MAX_STREAM_TEXT_CHARS`. */
  text: string;
  /** The text was longer than that: the final text comes with the call's result. */
  truncated?: boolean;
  /** Characters of reasoning (`reasoning_content`) received so far; its text is not shown. */
  reasoningChars?: number;
  /** Tool calls the reply has started, by name, in order (arguments are not shown while written). */
  toolCalls?: string[];
  /** The stream has ended (the call is assembling its result). */
  done?: boolean;
}

/** Longest text one heartbeat carries (characters). */
export const MAX_STREAM_TEXT_CHARS = 64 * 1024;

/** How often a streaming call sends what it has received (the first text goes at once). */
export const STREAM_BATCH_MS = 100;

export function isStreamProgress(value: unknown): value is ModelStreamProgress {
  return value !== null && typeof value === 'object' && (value as { kind?: unknown }).kind === STREAM_PROGRESS_KIND;
}
