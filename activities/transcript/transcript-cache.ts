/**
 * The worker's copy of each session run's transcript, so that a model call's input can name where
 * the transcript stands instead of carrying it. On a miss (a restarted worker, another worker, a
 * copy that does not match the hash) the copy is filled again, page by page, from the session's
 * `transcriptPage` query; the chain hash proves it matches what the workflow holds.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { AssistantMessage, ChatMessage } from '../../common/messages';
import { HashedTranscript, TRANSCRIPT_PAGE_BYTES, type TranscriptPage, type TranscriptRef, type TranscriptSlice } from '../../common/transcript';

/** Reads one page of a session run's transcript (the `transcriptPage` query). */
export type TranscriptPageSource = (ref: { workflowId: string; runId: string }, from: number, to: number, maxBytes: number) => Promise<TranscriptPage>;

/** Failure type when the transcript could not be made to match its hash (retried: the workflow may have moved on). */
export const TRANSCRIPT_UNAVAILABLE = 'LoopwrightTranscriptUnavailable';

/** Default memory for cached transcripts (JSON bytes; the JavaScript objects take about twice). */
export const DEFAULT_TRANSCRIPT_CACHE_BYTES = 256 * 1024 * 1024;

/** How a transcript was obtained, for logs and tests. */
export type CacheOutcome = 'hit' | 'delta' | 'synced' | 'refilled';

/** Least recently used transcripts, bounded by their total bytes. */
export class TranscriptCache {
  private readonly entries = new Map<string, HashedTranscript>();
  /** Runs whose copy ends in tool messages the worker added itself (inline reads): the length before them. */
  private readonly confirmed = new Map<string, number>();
  private totalBytes = 0;
  /** Counts of each outcome since the worker started. */
  readonly stats: Record<CacheOutcome, number> = { hit: 0, delta: 0, synced: 0, refilled: 0 };

  constructor(
    private readonly source: TranscriptPageSource,
    private readonly maxBytes = DEFAULT_TRANSCRIPT_CACHE_BYTES,
  ) {}

  /** Sessions cached now. */
  get size(): number {
    return this.entries.size;
  }

  /** Bytes cached now. */
  get bytes(): number {
    return this.totalBytes;
  }

  /**
   * The transcript `ref` names, from the cache, the inline `delta`, the query, or all three.
   * `onPage` runs after each page fetched (the activity heartbeats there).
   */
  async resolve(ref: TranscriptRef, delta: TranscriptSlice | undefined, onPage: () => void = () => undefined): Promise<{ transcript: HashedTranscript; outcome: CacheOutcome }> {
    const key = keyOf(ref);
    let transcript = this.take(key);
    const confirmed = this.confirmed.get(key);
    this.confirmed.delete(key);
    try {
      if (transcript && transcript.length >= ref.count && transcript.hashAt(ref.count) === ref.hash) {
        transcript.truncate(ref.count);
        return this.done(transcript, 'hit');
      }
      // The tool messages this worker added after the reply were not what the session appended: drop them.
      if (transcript && confirmed !== undefined && confirmed < transcript.length) transcript.truncate(confirmed);
      if (transcript && delta && delta.from <= transcript.length && delta.from + delta.messages.length === ref.count) {
        transcript.truncate(delta.from);
        transcript.push(...delta.messages);
        if (transcript.hashAt() === ref.hash) return this.done(transcript, 'delta');
      }
      if (transcript && transcript.length < ref.count) {
        await this.fill(transcript, ref, onPage);
        if (transcript.length === ref.count && transcript.hashAt() === ref.hash) return this.done(transcript, 'synced');
      }
      transcript = await this.startFor(ref, onPage);
      await this.fill(transcript, ref, onPage);
      if (transcript.length === ref.count && transcript.hashAt() === ref.hash) return this.done(transcript, 'refilled');
      throw ApplicationFailure.create({
        type: TRANSCRIPT_UNAVAILABLE,
        message: `The session's transcript does not match what the model call names (${transcript.length} messages read, ${ref.count} expected, hash ${transcript.hashAt()} vs ${ref.hash})`,
        nonRetryable: false,
      });
    } finally {
      if (transcript) this.put(key, transcript);
    }
  }

  /** Append the reply a model call returned, so the next call of the session finds it here. */
  recordReply(ref: TranscriptRef, message: AssistantMessage): void {
    const key = keyOf(ref);
    const transcript = this.take(key);
    if (!transcript) return;
    if (transcript.length === ref.count) transcript.push(message);
    this.put(key, transcript);
  }

  /**
   * After the reply `recordReply` added, the tool messages the session will append for it when it
   * takes the results this worker ran inline: the next call then finds its transcript here even
   * when those messages are too large to travel inline. If the session appends something else, the
   * next call drops them again (`resolve`).
   */
  recordToolMessages(ref: TranscriptRef, messages: readonly ChatMessage[]): void {
    const key = keyOf(ref);
    const transcript = this.take(key);
    if (!transcript) return;
    if (transcript.length === ref.count + 1) {
      this.confirmed.set(key, transcript.length);
      transcript.push(...messages);
    }
    this.put(key, transcript);
  }

  /** Forget everything (tests). */
  clear(): void {
    this.entries.clear();
    this.confirmed.clear();
    this.totalBytes = 0;
  }

  private done(transcript: HashedTranscript, outcome: CacheOutcome): { transcript: HashedTranscript; outcome: CacheOutcome } {
    this.stats[outcome] += 1;
    return { transcript, outcome };
  }

  /**
   * An empty copy for `ref`: for a run that holds only part of the transcript (a gap), the messages
   * before the gap and the gap itself, so that filling goes on after it.
   */
  private async startFor(ref: TranscriptRef, onPage: () => void): Promise<HashedTranscript> {
    const transcript = new HashedTranscript();
    if (!ref.gap) return transcript;
    const head: ChatMessage[] = [];
    while (head.length < ref.gap.from) {
      const page = await this.source(ref, head.length, ref.gap.from, TRANSCRIPT_PAGE_BYTES);
      onPage();
      if (page.from !== head.length || page.messages.length === 0) break;
      head.push(...page.messages);
    }
    transcript.startWithGap(head, ref.gap.to, ref.gap.hash);
    return transcript;
  }

  private async fill(transcript: HashedTranscript, ref: TranscriptRef, onPage: () => void): Promise<void> {
    while (transcript.length < ref.count) {
      const page = await this.source(ref, transcript.length, ref.count, TRANSCRIPT_PAGE_BYTES);
      onPage();
      if (page.from !== transcript.length || page.messages.length === 0) return;
      transcript.push(...page.messages);
    }
  }

  private take(key: string): HashedTranscript | undefined {
    const transcript = this.entries.get(key);
    if (transcript) {
      this.entries.delete(key);
      this.totalBytes -= transcript.bytes;
    }
    return transcript;
  }

  private put(key: string, transcript: HashedTranscript): void {
    this.entries.set(key, transcript);
    this.totalBytes += transcript.bytes;
    // Evict the least recently used, never the one just used.
    for (const [oldKey, old] of this.entries) {
      if (this.totalBytes <= this.maxBytes || oldKey === key) break;
      this.entries.delete(oldKey);
      this.confirmed.delete(oldKey);
      this.totalBytes -= old.bytes;
    }
  }
}

function keyOf(ref: { workflowId: string; runId: string }): string {
  return `${ref.workflowId}\u0000${ref.runId}`;
}
