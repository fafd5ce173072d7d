/** One output stream of a command, kept up to a number of bytes; the rest is counted and dropped. */
export class BoundedOutput {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  /** Every byte the command wrote to the stream, kept or not. */
  total = 0;

  constructor(private readonly limit: number) {}

  /** Adds `chunk`; returns false once the stream has passed the limit. */
  push(chunk: Buffer): boolean {
    this.total += chunk.length;
    const room = this.limit - this.kept;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.chunks.push(part);
      this.kept += part.length;
    }
    return this.total <= this.limit;
  }

  /** The stream passed the limit, so `text()` is its beginning only. */
  get truncated(): boolean {
    return this.total > this.limit;
  }

  /** What was kept, as UTF-8 (a character cut at the limit becomes U+FFFD). */
  text(): string {
    return Buffer.concat(this.chunks, this.kept).toString('utf8');
  }
}
