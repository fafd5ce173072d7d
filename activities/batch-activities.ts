/**
 * The batch workflow's activities: read the input file a page at a time (from a line and byte
 * cursor, with a line and byte bound), append finished items' result lines to a journal, assemble
 * the result file from the journal (one line per item, in item order), and wait for a session that
 * an earlier batch with the same id already started. Also the client's check of a whole input file.
 */
import fs from 'node:fs';
import readline from 'node:readline';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { BATCH_BAD_INPUT, BatchInputError, type BatchCursor, type BatchItem, type BatchJournalEntry, type BatchPage, type BatchResultLine, parseBatchLine } from '../common/batch-types';
import type { SessionResult, TurnResult } from '../common/session-types';
import { heartbeatEverySecond } from './model/heartbeat';

const CHUNK_BYTES = 64 * 1024;

/** What `readBatchPage` is asked for. */
export interface ReadBatchPageInput {
  path: string;
  cursor: BatchCursor;
  maxLines: number;
  maxBytes: number;
}

/** What a session an earlier batch started ended with. */
export interface SessionOutcome {
  result?: SessionResult;
  failure?: { message: string; cancelled: boolean; turn?: TurnResult };
}

/** The batch activities, keyed by the names the workflow schedules. */
export interface BatchActivities {
  readBatchPage(input: ReadBatchPageInput): Promise<BatchPage>;
  appendBatchResults(input: { journalPath: string; batchId: string; lines: BatchResultLine[] }): Promise<void>;
  assembleBatchResults(input: { journalPath: string; outputPath: string; batchId: string }): Promise<{ lines: number }>;
  awaitSessionOutcome(workflowId: string): Promise<SessionOutcome>;
}

/**
 * Run a file activity while heartbeating: the batch schedules them with a short heartbeat timeout, so
 * one whose completion the server lost (a history host gone at that moment) is retried within
 * seconds instead of waiting out its start-to-close timeout while the whole batch waits on it.
 */
async function beating<T>(work: () => Promise<T>): Promise<T> {
  const stop = heartbeatEverySecond();
  try {
    return await work();
  } finally {
    stop();
  }
}

/** Where a batch keeps the result lines of finished items until it writes its result file. */
export function journalPathOf(outputPath: string): string {
  return `${outputPath}.journal`;
}

export function createBatchActivities(options: { client?: Client } = {}): BatchActivities {
  return {
    readBatchPage: (input) => beating(() => readBatchPage(input)),
    appendBatchResults: ({ journalPath, batchId, lines }) =>
      beating(async () => {
        if (lines.length === 0) return;
        const text = lines.map((line) => JSON.stringify({ batchId, ...line } satisfies BatchJournalEntry)).join('\n');
        // A leading newline ends a line a killed worker may have left half-written; blank lines are skipped.
        await fs.promises.appendFile(journalPath, `\n${text}\n`);
      }),
    assembleBatchResults: (input) => beating(() => assembleBatchResults(input)),
    async awaitSessionOutcome(workflowId) {
      if (!options.client) throw ApplicationFailure.nonRetryable('This worker has no client to follow sessions with', 'LoopwrightWorkerMisconfigured');
      const beat = setInterval(() => Context.current().heartbeat(), 1_000);
      try {
        return { result: (await options.client.workflow.getHandle(workflowId).result()) as SessionResult };
      } catch (err) {
        if (!(err instanceof WorkflowFailedError)) throw err;
        const cause = err.cause;
        const turn = cause instanceof ApplicationFailure ? (cause.details?.[0] as TurnResult | undefined) : undefined;
        return { failure: { message: cause?.message ?? err.message, cancelled: cause instanceof CancelledFailure, ...(turn ? { turn } : {}) } };
      } finally {
        clearInterval(beat);
      }
    },
  };
}

/** Items from `cursor` on: at most `maxLines` of them and (past the first) `maxBytes` of messages. */
export async function readBatchPage({ path, cursor, maxLines, maxBytes }: ReadBatchPageInput): Promise<BatchPage> {
  const file = await fs.promises.open(path, 'r');
  try {
    const items: BatchItem[] = [];
    let bytes = 0;
    let { line, byte, index } = cursor;
    let pending = Buffer.alloc(0);
    let position = byte;
    let eof = false;
    for (;;) {
      let newline = pending.indexOf(0x0a);
      if (newline < 0 && !eof) {
        const chunk = Buffer.alloc(CHUNK_BYTES);
        const { bytesRead } = await file.read(chunk, 0, CHUNK_BYTES, position);
        position += bytesRead;
        if (bytesRead === 0) eof = true;
        pending = Buffer.concat([pending, chunk.subarray(0, bytesRead)]);
        continue;
      }
      if (newline < 0 && pending.length === 0) return { items, done: true };
      if (newline < 0) newline = pending.length; // the last line has no newline
      const raw = pending.subarray(0, newline).toString('utf8').replace(/\r$/, '');
      const consumed = Math.min(newline + 1, pending.length);
      let parsed;
      try {
        parsed = parseBatchLine(raw, line);
      } catch (err) {
        if (err instanceof BatchInputError) throw ApplicationFailure.nonRetryable(`${path}: ${err.message}`, BATCH_BAD_INPUT);
        throw err;
      }
      const size = parsed ? Buffer.byteLength(parsed.message) : 0;
      if (parsed && items.length > 0 && (items.length >= maxLines || bytes + size > maxBytes)) return { items, done: false };
      pending = pending.subarray(consumed);
      byte += consumed;
      line += 1;
      if (parsed) {
        index += 1;
        bytes += size;
        items.push({ index: index - 1, line: line - 1, ...parsed, next: { line, byte, index } });
      }
    }
  } finally {
    await file.close();
  }
}

/** Check a whole input file before a batch starts: its items, or a BatchInputError naming the first bad line. */
export async function scanBatchFile(path: string): Promise<{ items: number }> {
  const lines = readline.createInterface({ input: fs.createReadStream(path), crlfDelay: Infinity });
  let line = 0;
  let items = 0;
  for await (const text of lines) {
    line += 1;
    if (parseBatchLine(text, line)) items += 1;
  }
  return { items };
}

/**
 * Write the result file from the journal: one line per item index (a line written twice, by a
 * retried append or a replayed batch, counts once), in item order, through a temporary file and a
 * rename; then drop the journal. Run again after it finished, it finds the result file and no journal.
 */
export async function assembleBatchResults({ journalPath, outputPath, batchId }: { journalPath: string; outputPath: string; batchId: string }): Promise<{ lines: number }> {
  if (!fs.existsSync(journalPath)) {
    if (!fs.existsSync(outputPath)) {
      await fs.promises.writeFile(outputPath, '');
      return { lines: 0 };
    }
    return { lines: (await fs.promises.readFile(outputPath, 'utf8')).split('\n').filter((l) => l.trim() !== '').length };
  }
  const byIndex = new Map<number, BatchResultLine>();
  const lines = readline.createInterface({ input: fs.createReadStream(journalPath), crlfDelay: Infinity });
  for await (const text of lines) {
    if (text.trim() === '') continue;
    let entry: BatchJournalEntry;
    try {
      entry = JSON.parse(text) as BatchJournalEntry;
    } catch {
      continue; // a line cut short by a killed worker; its item was written again after the retry
    }
    if (entry.batchId !== batchId || byIndex.has(entry.index)) continue;
    const { batchId: _batch, ...line } = entry;
    byIndex.set(line.index, line);
  }
  const sorted = [...byIndex.values()].sort((a, b) => a.index - b.index);
  const temporary = `${outputPath}.tmp-${process.pid}`;
  await fs.promises.writeFile(temporary, sorted.map((line) => `${JSON.stringify(line)}\n`).join(''));
  await fs.promises.rename(temporary, outputPath);
  await fs.promises.rm(journalPath, { force: true });
  return { lines: sorted.length };
}
