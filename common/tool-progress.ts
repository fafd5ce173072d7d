/**
 * A running tool's output so far: what a tool activity (a command) puts in its heartbeat details,
 * which Temporal keeps outside history (only the latest) and shows to any client, so the command
 * line's `follow()` and the web events read it alike. Each report carries the output's tail and the
 * count of bytes so far; a reader shows the bytes it has not shown yet (`newOutput`). Pure data
 * and text, without Node's APIs like the rest of common/: every layer imports it.
 */

/** What a running tool reports through its heartbeat (`ToolRunOptions.progress`). */
export interface ToolProgress {
  kind: 'tool_progress';
  /** The tool's target argument as the model wrote it (a command line), to tell parallel calls apart. */
  target?: string;
  /** The tail of its output so far. */
  output: string;
  /** Bytes of output so far, shown or not. */
  bytes: number;
}

/** Whether heartbeat details are a tool's progress (other heartbeats carry other things, or nothing). */
export function isToolProgress(details: unknown): details is ToolProgress {
  if (typeof details !== 'object' || details === null) return false;
  const d = details as Record<string, unknown>;
  return d.kind === 'tool_progress' && typeof d.output === 'string' && typeof d.bytes === 'number' && (d.target === undefined || typeof d.target === 'string');
}

/**
 * The last `bytes` bytes of `tail` (the output's end): what a reader has not shown yet when the
 * output grew by `bytes`, with a mark where output between two reports was not seen (it grew by
 * more than the tail holds). A character cut at the start becomes U+FFFD and is dropped.
 */
export function newOutput(tail: string, bytes: number): string {
  const encoded = new TextEncoder().encode(tail);
  if (bytes >= encoded.length) return bytes > encoded.length ? `…${tail}` : tail;
  return new TextDecoder().decode(encoded.subarray(encoded.length - bytes)).replace(/^\uFFFD+/, '');
}
