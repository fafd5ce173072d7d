/**
 * Batch runs: one one-shot session per line of a JSONL file, as child workflows of an `agentBatch`
 * workflow. Its input, the pages of items it reads, the result lines it writes, and its state.
 */
import type { HeadlessStatus } from './headless';
import type { TokenUsage } from './messages';
import type { SessionInput } from './session-types';
import { MAX_USER_MESSAGE_BYTES } from './defaults';
import { utf8Length } from './transcript';

/** Name of the batch workflow type, as registered by the worker. */
export const BATCH_WORKFLOW = 'agentBatch';
/** Sessions running at once unless `concurrency` says otherwise. */
export const DEFAULT_BATCH_CONCURRENCY = 4;
/** A run continues as new after this many items completed in it (history stays bounded). */
export const DEFAULT_BATCH_CONTINUE_AFTER = 500;
/** Items per page the batch reads from its input file, and the most bytes of messages a page holds. */
export const DEFAULT_BATCH_PAGE_LINES = 100;
export const DEFAULT_BATCH_PAGE_BYTES = 256 * 1024;

/** Where the batch stands in its input file: the next line (1-based), its byte offset, the next item's index. */
export interface BatchCursor {
  line: number;
  byte: number;
  index: number;
}

/** One item of the input: line `line` of the file, item number `index` (0-based, blank lines skipped). */
export interface BatchItem {
  index: number;
  line: number;
  id?: string;
  message: string;
  /** The cursor just after this item. */
  next: BatchCursor;
}

/** One page of items read from the input file; `done` once the file's end was reached. */
export interface BatchPage {
  items: BatchItem[];
  done: boolean;
}

/** Settings every item's session gets (the item supplies the first message). */
export type BatchSessionSettings = Omit<SessionInput, 'firstMessage' | 'oneShot' | 'continued' | 'branchFrom'>;

/** Counters of a batch; carried from run to run. */
export interface BatchCounts {
  started: number;
  ok: number;
  failed: number;
  /** Sessions cancelled while they ran (the batch was cancelled). */
  cancelled: number;
  /** Finished items by the status of their turn (`cancelled`, or `failed` for a session that failed outside its turn). */
  byStatus: Record<string, number>;
  usage: TokenUsage;
}

/** Input of the `agentBatch` workflow. */
export interface BatchInput {
  /** The JSONL input file (absolute; read by the worker, page by page). */
  inputPath: string;
  /** The JSONL result file (absolute; written by the worker when the batch ends). */
  outputPath: string;
  /** Items in the file (counted by the client when it checked the file). */
  total: number;
  concurrency?: number;
  session: BatchSessionSettings;
  /** Continue as new after this many items completed in one run (default 500; tests set it low). */
  continueAfter?: number;
  /** Run every item headless (see common/headless.ts): its result line carries the JSON status its answer ended with. */
  headless?: boolean;
  pageLines?: number;
  pageBytes?: number;
  /** Set by the batch itself when it continues as new. */
  carried?: { cursor: BatchCursor; counts: BatchCounts; run: number };
}

/** What the `batchState` query answers. */
export interface BatchState extends BatchCounts {
  total: number;
  /** Sessions running now. */
  running: number;
  /** running: starting sessions; cancelling: waiting for cancelled sessions; writing: assembling the result file; done. */
  phase: 'running' | 'cancelling' | 'writing' | 'done';
  run: number;
  outputPath: string;
}

/** The batch workflow's result. */
export interface BatchSummary extends BatchCounts {
  total: number;
  /** Items never started (the batch was cancelled first). */
  notStarted: number;
  /** Whether the batch was cancelled. */
  cancelledBatch: boolean;
  outputPath: string;
  /** Lines in the result file: one per finished item. */
  resultLines: number;
  runs: number;
}

/** One line of the result file. */
export interface BatchResultLine {
  index: number;
  id?: string;
  workflowId: string;
  status: string;
  success: boolean;
  response: string | null;
  error?: string;
  usage: TokenUsage;
  /** A headless batch: the JSON status the item's answer ended with. */
  headless?: HeadlessStatus;
}

/** Journal entries carry the batch id, so a result file's journal left by another batch is never mixed in. */
export interface BatchJournalEntry extends BatchResultLine {
  batchId: string;
}

/** Parse one line of a batch input file: a JSON string, or `{"message": "...", "id"?: "..."}`. Blank lines give null. */
export function parseBatchLine(text: string, line: number): { id?: string; message: string } | null {
  if (text.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new BatchInputError(line, `not JSON (${(err as Error).message})`);
  }
  if (typeof value === 'string') return { message: checkedMessage(value, line) };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new BatchInputError(line, 'expected a JSON string or an object {"message": "...", "id"?: "..."}');
  }
  const { message, id, ...rest } = value as Record<string, unknown>;
  if (typeof message !== 'string') throw new BatchInputError(line, '"message" must be a string');
  if (id !== undefined && typeof id !== 'string') throw new BatchInputError(line, '"id" must be a string');
  const extra = Object.keys(rest);
  if (extra.length > 0) throw new BatchInputError(line, `unknown field(s) ${extra.map((k) => JSON.stringify(k)).join(', ')}`);
  return { message: checkedMessage(message, line), ...(id !== undefined ? { id } : {}) };
}

function checkedMessage(message: string, line: number): string {
  if (message.trim() === '') throw new BatchInputError(line, 'the message is empty');
  const bytes = utf8Length(message);
  if (bytes > MAX_USER_MESSAGE_BYTES) throw new BatchInputError(line, `the message is ${bytes} bytes, over the limit of ${MAX_USER_MESSAGE_BYTES} bytes`);
  return message;
}

/** A line of a batch input file that is not an item; names the line (1-based). */
export class BatchInputError extends Error {
  override name = 'BatchInputError';
  constructor(
    readonly line: number,
    readonly problem: string,
  ) {
    super(`line ${line}: ${problem}`);
  }
}

/** Failure type of a batch whose input file has a bad line (found by the worker). */
export const BATCH_BAD_INPUT = 'LoopwrightBatchBadInput';
