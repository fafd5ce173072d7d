/**
 * Pure helpers of the live-output bench (stream.ts): the reply the fake model streams, and what a
 * reader following one single-reply turn saw, from its `follow()` events and the times they came.
 */
import type { SessionEvent } from '../../client/session-events';

/** A `follow()` event and when the reader got it (ms since the epoch, `Date.now()`). */
export interface TimedEvent {
  at: number;
  event: SessionEvent;
}

/** What a reader saw of a turn with one reply. */
export interface ReaderSummary {
  /** When the first character of the reply reached the reader (first `text` event with text). */
  firstTextAt?: number;
  /** That first text came before `reply_done`: from the stream (the heartbeat), not from the finished transcript. */
  firstTextLive: boolean;
  /** `text` events, and those of them before `reply_done` (pieces shown while the reply was written). */
  textEvents: number;
  liveTextEvents: number;
  restarts: number;
  /** The reply as the reader put it together: each text written at its offset, a restart starting afresh. */
  joined: string;
  /** A `turn_ended` event came. */
  ended: boolean;
}

/** Sum up `events` of one turn with (at most) one reply. */
export function summarizeReader(events: readonly TimedEvent[]): ReaderSummary {
  const summary: ReaderSummary = { firstTextLive: false, textEvents: 0, liveTextEvents: 0, restarts: 0, joined: '', ended: false };
  let done = false;
  for (const { at, event } of events) {
    if (event.type === 'text' && event.text !== '') {
      summary.textEvents += 1;
      if (!done) summary.liveTextEvents += 1;
      if (summary.firstTextAt === undefined) {
        summary.firstTextAt = at;
        summary.firstTextLive = !done;
      }
      summary.joined = summary.joined.slice(0, event.offset).padEnd(event.offset, '\u0000') + event.text;
    } else if (event.type === 'restart') {
      summary.restarts += 1;
      summary.joined = '';
    } else if (event.type === 'reply_done') {
      done = true;
    } else if (event.type === 'turn_ended') {
      summary.ended = true;
    }
  }
  return summary;
}

/** About `chars` characters of plain words ("w1 w2 w3 ..."), exactly `chars` long, no space at either end. */
export function replyText(chars: number): string {
  let out = '';
  for (let i = 1; out.length < chars; i++) out += `${out === '' ? '' : ' '}w${i}`;
  return out.slice(0, chars).trimEnd().padEnd(chars, '.');
}
