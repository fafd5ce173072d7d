/**
 * A session's AG-UI event stream (GET /api/sessions/:id/events, server-sent events) that resumes
 * where it was. Every event carries an id; the stream is opened again after a dropped connection or
 * a server restart with `?lastEventId=` set to the last event handled, so the server sends only what
 * follows it: no event lost, none repeated. The page does the reconnecting itself (closing the
 * EventSource on an error) rather than leaving it to the browser's own retry, whose Last-Event-ID
 * header would travel beside a stale `?lastEventId=` in the URL: one source of truth is simpler.
 *
 * An EventSource does not tell why it failed, so after an error one plain request to the same URL
 * (dropped as soon as its status is known) tells: 204, the session is over and the stream has
 * nothing more (stop); 400, the id cannot be read (start again without one); 401 or 403, the token
 * is missing (stop, saying so); no answer, the server is away (try again, waiting longer each time).
 */

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5000;

/**
 * @typedef {{type: string, [key: string]: any}} AgUiEvent
 * @typedef {'connecting' | 'open' | 'retrying' | 'ended' | 'refused' | 'closed'} StreamStatus
 */

export class SessionEventStream {
  /**
   * @param {string} sessionId
   * @param {{
   *   lastEventId?: string,
   *   onEvent: (event: AgUiEvent, id: string) => void,
   *   onStatus?: (status: StreamStatus, detail?: string) => void,
   *   onUnreadableId?: () => void,
   * }} options `lastEventId`: resume after this event (none: the running turn from its start, or the
   *   next turn); `onUnreadableId`: the server could not read the id, and the stream starts again without one
   */
  constructor(sessionId, options) {
    this.sessionId = sessionId;
    this.lastEventId = options.lastEventId;
    this.onEvent = options.onEvent;
    this.onStatus = options.onStatus ?? (() => undefined);
    this.onUnreadableId = options.onUnreadableId ?? (() => undefined);
    /** @type {EventSource | undefined} */
    this.source = undefined;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.retryTimer = undefined;
    this.retryMs = FIRST_RETRY_MS;
    this.closed = false;
  }

  /** The stream's URL, resuming after the last event handled. */
  url() {
    const params = new URLSearchParams();
    if (this.lastEventId) params.set('lastEventId', this.lastEventId);
    const qs = params.toString();
    return `/api/sessions/${encodeURIComponent(this.sessionId)}/events${qs ? `?${qs}` : ''}`;
  }

  /** Open the stream (again). */
  open() {
    if (this.closed) return;
    this.onStatus('connecting');
    const source = new EventSource(this.url(), { withCredentials: true });
    this.source = source;
    source.onopen = () => {
      this.retryMs = FIRST_RETRY_MS;
      this.onStatus('open');
    };
    source.onmessage = (message) => this.handle(message);
    source.onerror = () => {
      if (this.source !== source) return;
      source.close();
      this.source = undefined;
      if (!this.closed) void this.recover();
    };
  }

  /** After an error: ask why (see the header), then stop, start again without the id, or retry. */
  async recover() {
    const status = await this.probe();
    if (this.closed) return;
    if (status === 204) {
      this.onStatus('ended', 'the session is over');
      this.stop();
      return;
    }
    if (status === 401 || status === 403) {
      this.onStatus('refused', 'the server refused the stream: open the link loopwright serve printed (with its token)');
      this.stop();
      return;
    }
    if (status === 400 && this.lastEventId) {
      this.lastEventId = undefined;
      this.onUnreadableId();
      this.open();
      return;
    }
    const wait = status === 200 ? FIRST_RETRY_MS : this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    this.onStatus('retrying', `connection lost; trying again in ${(wait / 1000).toFixed(1)} s`);
    this.retryTimer = setTimeout(() => this.open(), wait);
  }

  /** The status the stream's URL answers now (0: no answer); the body is never read. */
  async probe() {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 5000);
    try {
      const res = await fetch(this.url(), { headers: { accept: 'text/event-stream' }, credentials: 'same-origin', signal: abort.signal });
      return res.status;
    } catch {
      return 0;
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
  }

  /**
   * One SSE message: a JSON AG-UI event. The id is taken only once the event was handled, so a
   * reload in the middle of handling resumes with that event again.
   * @param {MessageEvent} message
   */
  handle(message) {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    if (!event || typeof event.type !== 'string') return;
    this.onEvent(event, message.lastEventId);
    if (message.lastEventId) this.lastEventId = message.lastEventId;
  }

  /** Stop for good (another session opened, or the page leaves). */
  close() {
    this.stop();
    this.onStatus('closed');
  }

  stop() {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.source?.close();
    this.source = undefined;
  }
}
