/**
 * One event stream's bound (serve/events/sse-stream.ts) on a response whose socket never drains:
 * frames are written while what waits unsent stays under the bound (one large burst included); the
 * next write once it is over the bound drops the client at once (the socket destroyed, the reason
 * `slow`, the close callback called), and nothing more is written. The server-level test of a
 * client that does not read is in safety.test.ts.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { SseStream } from '../../serve/events/sse-stream';

/** A response whose bytes all stay unsent, as a client that never reads makes them. */
class StuckResponse extends EventEmitter {
  writableLength = 0;
  destroyed = false;
  ended = false;
  written: string[] = [];
  headers: Record<string, string> | undefined;
  socket = { setNoDelay: () => undefined, setTimeout: () => undefined };
  writeHead(_status: number, headers: Record<string, string>): this {
    this.headers = headers;
    return this;
  }
  write(chunk: string): boolean {
    this.written.push(chunk);
    this.writableLength += Buffer.byteLength(chunk);
    return false;
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

test('a stream whose client does not read is dropped at the first write past the bound, not before', () => {
  const res = new StuckResponse();
  let closes = 0;
  const stream = new SseStream(res as unknown as ServerResponse, { maxBufferedBytes: 1000, keepAliveMs: 60_000 }, () => void (closes += 1));
  expect(res.headers?.['content-type']).toBe('text/event-stream; charset=utf-8');
  // Under the bound: written. One burst larger than the bound is written too (the check comes before a write).
  expect(stream.write('x'.repeat(900))).toBe(true);
  expect(stream.write('y'.repeat(5000))).toBe(true);
  expect(stream.closed).toBe(false);
  // Past the bound when more is due: dropped, nothing more written.
  const before = res.written.length;
  expect(stream.write('z')).toBe(false);
  expect(stream.closed).toBe(true);
  expect(stream.closeReason).toBe('slow');
  expect(res.destroyed).toBe(true);
  expect(closes).toBe(1);
  expect(res.written.length).toBe(before);
  expect(stream.write('again')).toBe(false);
});

test('a client that reads keeps its stream; end() ends it for a reconnect', () => {
  const res = new StuckResponse();
  const stream = new SseStream(res as unknown as ServerResponse, { maxBufferedBytes: 1000, keepAliveMs: 60_000 });
  for (let i = 0; i < 50; i++) {
    expect(stream.write('e'.repeat(200))).toBe(true);
    res.writableLength = 0; // the client read everything
  }
  stream.end();
  expect(stream.closeReason).toBe('ended');
  expect(res.ended).toBe(true);
  expect(stream.write('late')).toBe(false);
});
