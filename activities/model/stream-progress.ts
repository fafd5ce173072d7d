/**
 * The reply so far of a streamed model call, in the activity's heartbeat details
 * (`ModelStreamProgress`, common/stream-types.ts): the first text at once, then a batch at most
 * every STREAM_BATCH_MS, and a last one marked done when the stream ends. The text is redacted
 * like the final reply (the worker's secrets, in every form: redact.ts `redactKnownSecrets`), and
 * while the reply is still being written its end is held back wherever it could be the start of a
 * secret (the key half written is not yet recognisable as the key), so no heartbeat ever shows part
 * of one. Temporal keeps only the latest heartbeat; the model activity's keep-alive heartbeat
 * repeats the latest progress (`latest()`) rather than replacing it with nothing.
 */
import { MAX_STREAM_TEXT_CHARS, STREAM_BATCH_MS, STREAM_PROGRESS_KIND, type ModelStreamProgress } from '../../common/stream-types';
import { originalSpan, textViews } from '../redaction/escape-view';
import { redactKnownSecrets } from '../redaction/redact';
import { MIN_SECRET_LENGTH, secretForms } from '../redaction/secret-forms';

/**
 * Characters of the reply's text kept for the progress: beyond MAX_STREAM_TEXT_CHARS so that a
 * secret the cut goes through is still held back or redacted whole, not shown in part.
 */
export const PREVIEW_CHARS = 2 * MAX_STREAM_TEXT_CHARS;

/** What the progress shows of a reply being streamed (streaming.ts ChunkJoiner). */
export interface StreamSoFar {
  /** The text so far (content, else a refusal), its first PREVIEW_CHARS, and its whole length. */
  text(): { preview: string; total: number };
  reasoningChars(): number;
  toolCallNames(): string[];
}

/** What a reporter needs from its activity. */
export interface ReporterOptions {
  /** The activity's attempt (Context.info.attempt). */
  attempt: number;
  /** The secrets to keep out of the text (the model config's `secrets`). */
  secrets: readonly string[];
  /** Sends heartbeat details (Context.heartbeat). */
  heartbeat: (details: ModelStreamProgress) => void;
  /** Time between batches (default STREAM_BATCH_MS). */
  batchMs?: number;
}

/** Sends the progress of one streamed call; `stop()` when the call ends, however it ends. */
export class StreamProgressReporter {
  private seq = 0;
  private sent: ModelStreamProgress | undefined;
  private sentAt = -Infinity;
  private textSent = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly batchMs: number;

  constructor(private readonly options: ReporterOptions) {
    this.batchMs = options.batchMs ?? STREAM_BATCH_MS;
  }

  /** The latest progress sent (undefined before the first), for the keep-alive heartbeat to repeat. */
  latest(): ModelStreamProgress | undefined {
    return this.sent;
  }

  /** More of the reply arrived: send it now if it is the first text or a batch is due, else when one is. */
  update(source: StreamSoFar): void {
    const waited = performance.now() - this.sentAt;
    if ((!this.textSent && source.text().total > 0) || waited >= this.batchMs) {
      this.send(source, false);
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.send(source, false);
      }, this.batchMs - waited);
    }
  }

  /** The stream ended: send the whole reply, marked done. */
  finish(source: StreamSoFar): void {
    this.send(source, true);
  }

  /** No more batches (the call ended, or failed). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private send(source: StreamSoFar, done: boolean): void {
    this.stop();
    const { preview, total } = source.text();
    const progress = progressOf(preview, total, done, this.options.secrets);
    const toolCalls = source.toolCallNames().map((name) => redactKnownSecrets(name, this.options.secrets));
    const reasoningChars = source.reasoningChars();
    this.seq += 1;
    this.sent = {
      kind: STREAM_PROGRESS_KIND,
      attempt: this.options.attempt,
      seq: this.seq,
      ...progress,
      ...(reasoningChars > 0 ? { reasoningChars } : {}),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      ...(done ? { done: true } : {}),
    };
    this.sentAt = performance.now();
    if (total > 0) this.textSent = true;
    try {
      this.options.heartbeat(this.sent);
    } catch (err) {
      // Only fails while the activity is torn down; the call's own outcome is what must surface.
      void err;
    }
  }
}

/** The text to show: redacted, its unfinished end held back, cut at MAX_STREAM_TEXT_CHARS. */
function progressOf(preview: string, total: number, done: boolean, secrets: readonly string[]): { text: string; truncated?: true } {
  const whole = preview.length === total;
  const shown = redactKnownSecrets(done && whole ? preview : preview.slice(0, heldFrom(preview, secrets)), secrets);
  if (whole && shown.length <= MAX_STREAM_TEXT_CHARS) return { text: shown };
  let cut = Math.min(shown.length, MAX_STREAM_TEXT_CHARS);
  // Never half a surrogate pair.
  if (cut > 0 && cut < shown.length && /[\uD800-\uDBFF]/.test(shown[cut - 1]!)) cut -= 1;
  return { text: shown.slice(0, cut), truncated: true };
}

/**
 * Where the end of `text` that could be the start of a secret begins (`text.length` when none
 * could): the longest end that is the start of one of the secret's forms (plain, base64, hex) in any
 * view of the text (escapes decoded: secret-forms.ts, escape-view.ts), or an escape begun at the
 * very end (`%7`, `\u00`, `&#11`), which may spell anything once finished.
 */
export function heldFrom(text: string, secrets: readonly string[]): number {
  const forms = secrets.filter((s) => s.length >= MIN_SECRET_LENGTH).flatMap((s) => secretForms(s));
  if (forms.length === 0 || text === '') return text.length;
  const longest = Math.max(...forms.map((f) => f.text.length));
  // Only the end can hold an unfinished secret; escapes take at most a few characters per byte.
  const from = Math.max(0, text.length - 16 * longest - 16);
  let tail = text.slice(from);
  // An escape begun near the end may be unfinished: it is held back, and what comes before it checked.
  const escape = Math.max(tail.lastIndexOf('%'), tail.lastIndexOf('\\'), tail.lastIndexOf('&'));
  if (escape !== -1 && tail.length - escape <= 12) tail = tail.slice(0, escape);
  let held = tail.length;
  for (const view of textViews(tail)) {
    let lower: string | undefined;
    for (const form of forms) {
      const haystack = form.lowerCase ? (lower ??= view.text.replace(/[A-Z]+/g, (run) => run.toLowerCase())) : view.text;
      for (let size = Math.min(form.text.length - 1, haystack.length); size > 0; size -= 1) {
        if (haystack.endsWith(form.text.slice(0, size))) {
          held = Math.min(held, originalSpan(view, haystack.length - size, haystack.length)[0]);
          break;
        }
      }
    }
  }
  return from + held;
}
