/** The live-output bench's reading of a followed turn (scripts/bench/stream-reader.ts). */
import type { SessionEvent } from '../../../client/session-events';
import { replyText, summarizeReader, type TimedEvent } from '../../../scripts/bench/stream-reader';

const turnEnded = { type: 'turn_ended', turn: 1, result: {} } as unknown as SessionEvent;
const timed = (at: number, event: SessionEvent): TimedEvent => ({ at, event });
const piece = (at: number, offset: number, text: string) => timed(at, { type: 'text', turn: 1, reply: 1, offset, text });
const done = (at: number) => timed(at, { type: 'reply_done', turn: 1, reply: 1, toolCalls: [] });

describe('bench stream reader', () => {
  it('bench stream: the first text while written is live; pieces join at their offsets', () => {
    const seen = summarizeReader([piece(100, 0, 'Hel'), piece(150, 3, 'lo, w'), piece(200, 8, 'orld'), done(210), timed(220, turnEnded)]);
    expect(seen).toEqual({ firstTextAt: 100, firstTextLive: true, textEvents: 3, liveTextEvents: 3, restarts: 0, joined: 'Hello, world', ended: true });
  });

  it('bench stream: text first seen with the finished reply is not live; a restart starts the text afresh', () => {
    expect(summarizeReader([done(90), piece(100, 0, 'late')])).toMatchObject({ firstTextAt: 100, firstTextLive: false, liveTextEvents: 0, textEvents: 1, ended: false });
    const restarted = summarizeReader([piece(10, 0, 'abc'), timed(20, { type: 'restart', turn: 1, reply: 1, attempt: 2 }), piece(30, 0, 'xyz'), piece(40, 3, '!')]);
    expect(restarted).toMatchObject({ firstTextAt: 10, restarts: 1, joined: 'xyz!' });
  });

  it('bench stream: a gap between pieces never joins into the reply; no text leaves firstTextAt unset', () => {
    expect(summarizeReader([piece(1, 0, 'ab'), piece(2, 4, 'ef')]).joined).toBe('ab\u0000\u0000ef');
    expect(summarizeReader([done(1), timed(2, turnEnded)]).firstTextAt).toBeUndefined();
  });

  it('bench stream: replyText is exactly as long as asked, words with no space at either end', () => {
    for (const chars of [1, 2, 3, 7, 2000]) {
      const reply = replyText(chars);
      expect(reply).toHaveLength(chars);
      expect(reply).toBe(reply.trim());
    }
    expect(replyText(11)).toBe('w1 w2 w3 w4');
  });
});
