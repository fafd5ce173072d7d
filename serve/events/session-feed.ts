/**
 * One follower per session in a serve process, shared by every client that watches the session:
 * it asks the session for its state (and, while a turn runs, for the running activities' latest
 * heartbeats) once per round, reads new transcript messages once into a cache, and projects the
 * events for each cursor the watchers are at. Watchers at the same cursor (the usual case: all of
 * them in step) share one projection and one encoding. A watcher whose connection does not take
 * what it is sent is dropped by its own stream (sse-stream.ts), never waited for.
 *
 * The feed keeps no state a restart would lose: the cursors come back with the clients.
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { ChatMessage } from '../../common/messages';
import type { SessionState, TurnSummary } from '../../common/session-types';
import { isStreamProgress, type ModelStreamProgress } from '../../common/stream-types';
import type { SessionHandle } from '../../client/session-client';
import { findTurnEnd } from '../../client/turn-history';
import { encodeCursor, type StreamCursor } from './cursor';
import { type Emitted, isBusy, project, type ToolOutputSeen, type TurnFacts } from './projector';
import { TurnBoundaries } from './turn-boundaries';
import { isToolProgress } from '../../common/tool-progress';

/** A client watching the session. */
export interface Watcher {
  /** Where it is; the feed moves it on as it sends. */
  cursor: StreamCursor;
  /**
   * Send these events (the cursor after the last is `cursor`): `frames` holds each one encoded,
   * `joined` all of them. False when the watcher is gone.
   */
  send(events: readonly Emitted[], frames: readonly string[], joined: string): boolean;
  /** The session has nothing more for this watcher (it waits for a turn that will not come, or its turn ended). */
  finish(): void;
}

/** How often the feed asks the session. */
export interface FeedTiming {
  /** While a turn runs (default 50 ms, the live-output readers' pace). */
  busyMs: number;
  /** Between turns (default 200 ms; a message sent through this server wakes the feed at once). */
  idleMs: number;
}

export const DEFAULT_FEED_TIMING: FeedTiming = { busyMs: 50, idleMs: 200 };

const MODEL_ACTIVITIES = new Set(['callModelV2', 'callModel']);

/** Encodes one event as an SSE message (its `id:` line, then the event's `data:`). */
export type FrameEncoder = (emitted: Emitted) => string;

export class SessionFeed {
  private readonly watchers = new Set<Watcher>();
  private readonly cache = new Map<number, ChatMessage>();
  private boundaries = new TurnBoundaries();
  private rewoundTo: number | undefined;
  private readonly summaries = new Map<number, TurnSummary>();
  private running = false;
  private wakeUp: (() => void) | undefined;
  private lastIdleDescribe = 0;
  private lastState: SessionState | undefined;
  /** The last failure reading the session, while it lasts. */
  lastError: unknown;

  constructor(
    readonly sessionId: string,
    private readonly handle: SessionHandle,
    private readonly client: Client,
    private readonly encode: FrameEncoder,
    private readonly timing: FeedTiming = DEFAULT_FEED_TIMING,
    private readonly onIdle: () => void = () => undefined,
  ) {}

  get size(): number {
    return this.watchers.size;
  }

  /** Start sending to `watcher` (from its cursor). */
  add(watcher: Watcher): void {
    this.watchers.add(watcher);
    this.wake();
    if (!this.running) {
      this.running = true;
      void this.loop();
    }
  }

  remove(watcher: Watcher): void {
    this.watchers.delete(watcher);
  }

  /**
   * The session was taken back to the end of turn `turn`: what was read of later turns is
   * forgotten, and the watchers' next look ends the runs they were in and waits for turn `turn + 1`.
   */
  rewound(turn: number): void {
    this.rewoundTo = Math.min(turn, this.rewoundTo ?? turn);
    this.cache.clear();
    this.boundaries = new TurnBoundaries();
    this.summaries.clear();
    this.lastState = undefined;
    this.wake();
  }

  /** Look at the session now (a message was just sent through this server). */
  wake(): void {
    this.wakeUp?.();
  }

  private async loop(): Promise<void> {
    try {
      while (this.watchers.size > 0) {
        let busy = true;
        try {
          busy = await this.round();
          this.lastError = undefined;
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) {
            // The session is gone (or never was): nothing will come.
            for (const watcher of this.watchers) watcher.finish();
            this.watchers.clear();
            break;
          }
          // The server or the worker is away for a moment: keep the watchers and ask again.
          this.lastError = err;
        }
        if (this.watchers.size === 0) break;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, busy ? this.timing.busyMs : this.timing.idleMs);
          this.wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeUp = undefined;
      }
    } finally {
      this.running = false;
      this.cache.clear();
      this.onIdle();
    }
  }

  /** One look at the session, and the events for every watcher; whether a turn runs. */
  private async round(): Promise<boolean> {
    const state = await this.handle.state();
    // A run that took over from the last one (continue-as-new) shows fewer messages while it pages
    // its transcript in: nothing is projected from such a look. (After a rewind the turn is lower too.)
    const last = this.lastState;
    if (last && state.messageCount < last.messageCount && state.turn >= last.turn) return isBusy(state);
    // Fewer turns than before: the session was rewound (here or by another client).
    if (last && state.turn < last.turn) this.rewound(state.turn);
    const rewoundTo = this.rewoundTo;
    this.rewoundTo = undefined;
    this.noteTurnEnds(state);
    const busy = isBusy(state);
    let stream: ModelStreamProgress | undefined;
    let tools: ToolOutputSeen[] = [];
    let closed = false;
    const now = Date.now();
    if (busy || now - this.lastIdleDescribe > 5_000) {
      if (!busy) this.lastIdleDescribe = now;
      const seen = await this.activities();
      closed = seen.closed;
      tools = seen.tools;
      if (state.status === 'thinking' && seen.stream) {
        // The stream belongs to the reply after the state's last message only if no message came in between.
        const again = await this.handle.state();
        if (again.messageCount === state.messageCount && again.turn === state.turn) stream = seen.stream;
      }
    }
    const facts: TurnFacts = {
      sessionId: this.sessionId,
      state,
      ...(stream ? { stream } : {}),
      tools,
      closed,
      messages: (from, to) => this.messages(from, to),
      turnStart: (turn) => this.turnStart(turn, state),
      turnSummary: (turn) => this.turnSummary(turn),
      ...(rewoundTo !== undefined ? { rewoundTo } : {}),
    };
    // Watchers at the same cursor share one projection and one encoding.
    const groups = new Map<string, Watcher[]>();
    for (const watcher of this.watchers) {
      const key = encodeCursor(watcher.cursor);
      const group = groups.get(key);
      if (group) group.push(watcher);
      else groups.set(key, [watcher]);
    }
    for (const group of groups.values()) {
      const projection = await project(group[0]!.cursor, facts);
      const frames = projection.events.map(this.encode);
      const joined = frames.join('');
      for (const watcher of group) {
        if (!this.watchers.has(watcher)) continue;
        watcher.cursor = projection.cursor;
        if (projection.events.length > 0 && !watcher.send(projection.events, frames, joined)) {
          this.watchers.delete(watcher);
          continue;
        }
        if (projection.finished) {
          this.watchers.delete(watcher);
          watcher.finish();
        }
      }
    }
    this.trimCache();
    return busy;
  }

  /** Turn starts seen directly: when the state shows turn t over and idle, turn t + 1 starts at the message count. */
  private noteTurnEnds(state: SessionState): void {
    const last = this.lastState;
    this.lastState = state;
    if (!isBusy(state) && state.lastTurn?.turn === state.turn) this.boundaries.remember(state.turn + 1, state.messageCount);
    if (last && last.turn < state.turn) this.summaries.clear();
  }

  /** The running model call's stream, the running commands' output, and whether the workflow is closed, from one describe. */
  private async activities(): Promise<{ stream?: ModelStreamProgress; tools: ToolOutputSeen[]; closed: boolean }> {
    const description = await this.handle.workflow.describe();
    const converter = this.client.options.loadedDataConverter;
    let stream: ModelStreamProgress | undefined;
    const tools: ToolOutputSeen[] = [];
    for (const activity of description.raw.pendingActivities ?? []) {
      const name = activity.activityType?.name ?? '';
      const payloads = activity.heartbeatDetails?.payloads;
      if (!payloads || payloads.length === 0) continue;
      const details = await decodeFromPayloadsAtIndex<unknown>(converter, 0, payloads as never).catch(() => undefined);
      if (MODEL_ACTIVITIES.has(name)) {
        if (isStreamProgress(details)) stream = details;
        continue;
      }
      if (!isToolProgress(details)) continue;
      tools.push({ name, output: details.output, bytes: details.bytes, ...(details.target !== undefined ? { target: details.target } : {}) });
    }
    return { ...(stream ? { stream } : {}), tools, closed: description.status.name !== 'RUNNING' };
  }

  /** Messages `[from, to)`, from the cache where it has them. */
  private async messages(from: number, to: number): Promise<ChatMessage[]> {
    let missingFrom = from;
    while (missingFrom < to && this.cache.has(missingFrom)) missingFrom += 1;
    let missingTo = to;
    while (missingTo > missingFrom && this.cache.has(missingTo - 1)) missingTo -= 1;
    if (missingFrom < missingTo) {
      const read = await this.handle.messages(missingFrom, missingTo);
      read.forEach((message, k) => this.cache.set(missingFrom + k, message));
    }
    const out: ChatMessage[] = [];
    for (let index = from; index < to; index++) {
      const message = this.cache.get(index);
      if (message === undefined) throw new Error(`message ${index} of session ${this.sessionId} could not be read`);
      out.push(message);
    }
    return out;
  }

  private turnStart(turn: number, state: SessionState): Promise<number> {
    return this.boundaries.find(turn, state.turn, state.messageCount, (from, to) => this.messages(from, to));
  }

  /** How a turn the state no longer summarises ended, from the session's history (rare: a reader several turns behind). */
  private async turnSummary(turn: number): Promise<TurnSummary> {
    const known = this.summaries.get(turn);
    if (known) return known;
    const found = await findTurnEnd(this.client, this.handle.workflow, turn);
    const result = found?.ended.result as Partial<TurnSummary> | undefined;
    const summary: TurnSummary = result?.status
      ? { turn, success: result.success ?? false, status: result.status, iterations: result.iterations ?? 0, response: result.response ?? null, ...(result.error ? { error: result.error } : {}) }
      : { turn, success: false, status: 'failed', iterations: 0, response: null, error: 'The result of this turn is no longer kept' };
    this.summaries.set(turn, summary);
    return summary;
  }

  /** Forget the messages every watcher is past. */
  private trimCache(): void {
    let lowest = Infinity;
    for (const watcher of this.watchers) {
      if (watcher.cursor.kind === 'turn') lowest = Math.min(lowest, watcher.cursor.m);
      else lowest = Math.min(lowest, this.lastState?.messageCount ?? 0);
    }
    for (const index of this.cache.keys()) if (index < lowest) this.cache.delete(index);
  }
}

/** The feeds of one serve process, one per watched session, dropped when nobody watches. */
export class FeedRegistry {
  private readonly feeds = new Map<string, SessionFeed>();

  constructor(
    private readonly open: (sessionId: string) => { handle: SessionHandle; client: Client },
    private readonly encode: FrameEncoder,
    private readonly timing: FeedTiming = DEFAULT_FEED_TIMING,
  ) {}

  /** The feed of `sessionId`, made when none runs. */
  feed(sessionId: string): SessionFeed {
    let feed = this.feeds.get(sessionId);
    if (!feed) {
      const { handle, client } = this.open(sessionId);
      const made: SessionFeed = new SessionFeed(sessionId, handle, client, this.encode, this.timing, () => {
        if (this.feeds.get(sessionId) === made && made.size === 0) this.feeds.delete(sessionId);
      });
      feed = made;
      this.feeds.set(sessionId, feed);
    }
    return feed;
  }

  /** The session was rewound to the end of `turn` (see SessionFeed.rewound). */
  rewound(sessionId: string, turn: number): void {
    this.feeds.get(sessionId)?.rewound(turn);
  }

  /** Wake the session's feed, if one runs (a message was sent). */
  wake(sessionId: string): void {
    this.feeds.get(sessionId)?.wake();
  }

  /** Watchers over all sessions. */
  get watchers(): number {
    let n = 0;
    for (const feed of this.feeds.values()) n += feed.size;
    return n;
  }
}
