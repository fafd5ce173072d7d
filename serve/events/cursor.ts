/**
 * Where a reader of a session's event stream is, made only of the session's own durable positions,
 * so that any serve process (this one after a restart, or another) can go on from it: the turn, the
 * transcript message being projected and how many of its events were sent, the reply being written
 * and how many of its characters were sent (with a hash of them, to notice a reply that starts over),
 * the iteration step, the usage and compactions reported, the approvals announced, the bytes of
 * command output sent, and how many of the turn's closing events were sent.
 *
 * Every event on the stream carries the cursor after it as its SSE `id` (base64url of a short JSON
 * array): a reconnect with `Last-Event-ID` resumes exactly after that event.
 */

/** Waiting for turn `t` to begin (its `RUN_STARTED` is the next event). */
export interface WaitCursor {
  kind: 'wait';
  t: number;
}

/** Inside turn `t`, after `RUN_STARTED`. */
export interface TurnCursor {
  kind: 'turn';
  t: number;
  /** Index of the next transcript message to project (the turn's first message is its user message). */
  m: number;
  /** Events of message `m` already sent (a message's events are sent in a row). */
  j: number;
  /** The reply being written (1 for the turn's first). */
  r: number;
  /** Characters of reply `r` sent. */
  o: number;
  /** FNV-1a hash of those characters. */
  h: number;
  /** The model call attempt they came from (0: none yet). */
  at: number;
  /** `TEXT_MESSAGE_START` of reply `r` was sent. */
  ms: boolean;
  /** The iteration whose `STEP_STARTED` was sent last (0: none). */
  i: number;
  /** Its `STEP_FINISHED` was sent too. */
  f: boolean;
  /** The session's total tokens last reported. */
  u: number;
  /** The session's compactions last reported. */
  c: number;
  /** Closing events of the turn sent (0 until the turn is over). */
  e: number;
  /** Calls waiting for approval that were announced (and still wait, as far as the cursor knows). */
  ap: string[];
  /** Output bytes of running commands sent, by call id. */
  tb: Record<string, number>;
}

export type StreamCursor = WaitCursor | TurnCursor;

/** The FNV-1a hash of the empty string. */
export const FNV_START = 0x811c9dc5;

/** FNV-1a (32 bit) over UTF-16 code units, continued from `hash`: `fnv(b, fnv(a)) === fnv(a + b)`. */
export function fnv(text: string, hash = FNV_START): number {
  let h = hash;
  for (let k = 0; k < text.length; k++) {
    h ^= text.charCodeAt(k);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The cursor of a new turn `t` whose first message (its user message) is at `m`. */
export function turnCursor(t: number, m: number, usage: number, compactions: number): TurnCursor {
  return { kind: 'turn', t, m, j: 0, r: 1, o: 0, h: FNV_START, at: 0, ms: false, i: 0, f: false, u: usage, c: compactions, e: 0, ap: [], tb: {} };
}

const VERSION = 1;

/** The SSE id of a cursor. */
export function encodeCursor(cursor: StreamCursor): string {
  const fields =
    cursor.kind === 'wait'
      ? [VERSION, 0, cursor.t]
      : [VERSION, 1, cursor.t, cursor.m, cursor.j, cursor.r, cursor.o, cursor.h, cursor.at, cursor.ms ? 1 : 0, cursor.i, cursor.f ? 1 : 0, cursor.u, cursor.c, cursor.e, cursor.ap, cursor.tb];
  return Buffer.from(JSON.stringify(fields), 'utf8').toString('base64url');
}

/** Longest event id taken back (a cursor with many waiting approvals stays far below it). */
const MAX_ID_CHARS = 16 * 1024;

/** The cursor an SSE id names, or undefined when it is not one of ours. */
export function decodeCursor(id: string): StreamCursor | undefined {
  if (id.length === 0 || id.length > MAX_ID_CHARS || !/^[A-Za-z0-9_-]+$/.test(id)) return undefined;
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(id, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(fields) || fields[0] !== VERSION) return undefined;
  const whole = (v: unknown, min = 0): v is number => Number.isSafeInteger(v) && (v as number) >= min;
  if (fields[1] === 0) return fields.length === 3 && whole(fields[2], 1) ? { kind: 'wait', t: fields[2] } : undefined;
  if (fields[1] !== 1 || fields.length !== 17) return undefined;
  const [, , t, m, j, r, o, h, at, ms, i, f, u, c, e, ap, tb] = fields as unknown[];
  if (!whole(t, 1) || !whole(m) || !whole(j) || !whole(r, 1) || !whole(o) || !whole(h) || !whole(at) || !whole(i) || !whole(u) || !whole(c) || !whole(e)) return undefined;
  if ((ms !== 0 && ms !== 1) || (f !== 0 && f !== 1)) return undefined;
  if (!Array.isArray(ap) || !ap.every((x) => typeof x === 'string')) return undefined;
  if (tb === null || typeof tb !== 'object' || Array.isArray(tb) || !Object.values(tb).every((b) => whole(b))) return undefined;
  return { kind: 'turn', t, m, j, r, o, h, at, ms: ms === 1, i, f: f === 1, u, c, e, ap: ap as string[], tb: { ...(tb as Record<string, number>) } };
}

/** A copy to change (the arrays and maps too). */
export function copyCursor<C extends StreamCursor>(cursor: C): C {
  return cursor.kind === 'wait' ? { ...cursor } : ({ ...cursor, ap: [...cursor.ap], tb: { ...cursor.tb } } as C);
}
