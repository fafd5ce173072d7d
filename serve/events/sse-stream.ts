/**
 * One server-sent-events connection: headers, AG-UI events as SSE messages with their ids, a
 * comment now and then so proxies and browsers keep the connection, and a bound on what may wait
 * unsent. A client that reads too slowly (still more than `maxBufferedBytes` unsent when the next
 * events are due) is disconnected at once, so it never holds memory or anyone else up; it
 * reconnects with the id of the last event it got and loses nothing. The check comes before each
 * write, so one large burst (many tool results at once) does not drop a client that keeps up.
 */
import type { ServerResponse } from 'node:http';
import { EventEncoder } from '@ag-ui/encoder';
import { encodeCursor } from './cursor';
import type { Emitted } from './projector';

/** Bounds of one stream. */
export interface StreamLimits {
  /** Bytes that may still wait unsent for a client when more is due before it is dropped (default 2 MiB). */
  maxBufferedBytes: number;
  /** A comment line this often (default 15 s). */
  keepAliveMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { maxBufferedBytes: 2 * 1024 * 1024, keepAliveMs: 15_000 };

const encoder = new EventEncoder();

/** An event as one SSE message: `id:` (the cursor after it), then AG-UI's `data:` line. */
export function encodeFrame(emitted: Emitted): string {
  return `id: ${encodeCursor(emitted.cursor)}\n${encoder.encodeSSE(emitted.event)}`;
}

/** An open event stream to one client. */
export class SseStream {
  private readonly timer: NodeJS.Timeout;
  private closedFlag = false;
  /** Why the stream closed, when it did: the client left, read too slowly, or the stream ended. */
  closeReason: 'client' | 'slow' | 'ended' | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly limits: StreamLimits = DEFAULT_STREAM_LIMITS,
    onClose: () => void = () => undefined,
  ) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // Proxies (nginx) pass the events on as they come.
      'x-accel-buffering': 'no',
    });
    res.socket?.setNoDelay(true);
    // The stream is open for as long as the client wants it; idle sockets are not timed out.
    res.socket?.setTimeout(0);
    // A comment at once: the client knows the stream is open before the first event.
    res.write(': stream open\n\n');
    this.timer = setInterval(() => this.write(': keep-alive\n\n'), limits.keepAliveMs);
    this.timer.unref();
    res.on('close', () => {
      clearInterval(this.timer);
      if (!this.closedFlag) {
        this.closedFlag = true;
        this.closeReason ??= 'client';
      }
      onClose();
    });
  }

  get closed(): boolean {
    return this.closedFlag || this.res.destroyed;
  }

  /** Send frames; false when the stream is closed, or was just closed because the client is too slow. */
  write(frames: string): boolean {
    if (this.closed) return false;
    if (this.res.writableLength > this.limits.maxBufferedBytes) {
      this.closeReason = 'slow';
      this.closedFlag = true;
      clearInterval(this.timer);
      this.res.destroy();
      return false;
    }
    this.res.write(frames);
    return true;
  }

  /** End the stream (the client may reconnect). */
  end(): void {
    if (this.closed) return;
    this.closeReason = 'ended';
    this.closedFlag = true;
    clearInterval(this.timer);
    this.res.end();
  }
}
