/**
 * A bound on every HTTP body the model activities read from the model server. Node's fetch decodes
 * gzip, deflate and brotli transparently, so a reply of a few hundred KB on the wire can inflate to
 * gigabytes, and a server may also send a body that never ends; the openai client would read either
 * into one buffer. `limitedFetch` counts the decoded body as it arrives and, as soon as it passes the
 * limit, errors the read with `ReplyBodyTooLargeError` and cancels the response, which aborts the
 * request: what the worker holds stays near the limit, whatever the server sends.
 */

/** The fetch signature the openai client takes (its `fetch` option) and the activities call. */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A body from the model server passed the limit; the request was aborted. */
export class ReplyBodyTooLargeError extends Error {
  override readonly name = 'ReplyBodyTooLargeError';

  constructor(
    /** The limit that was passed, in bytes. */
    readonly limitBytes: number,
    /** Decoded bytes read when the read stopped (the limit plus the part of the chunk past it). */
    readonly receivedBytes: number,
    /** HTTP status of the response whose body it was. */
    readonly status: number,
  ) {
    // No wording about time: the openai client reads "timed out" in a fetch error as a timeout.
    super(`The model server sent a reply body over the limit of ${limitBytes} bytes (${receivedBytes} bytes read, decoded); the request was aborted`);
  }
}

/**
 * A fetch whose response bodies error with `ReplyBodyTooLargeError` once more than `limitBytes`
 * decoded bytes were read. A success body is limited as it streams (the openai client reads it
 * after fetch returns, and any streaming reply would be limited the same way). An error body is
 * read here, within the limit, before fetch returns: the openai client would otherwise read it
 * itself and keep only the error's text, so an oversized error reply could not fail as the typed,
 * non-retryable failure it is.
 */
export function limitedFetch(limitBytes: number, inner: Fetch = globalThis.fetch): Fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.body === null || (response.ok && withinDeclaredLength(response, limitBytes))) return response;
    const limited = withBody(response, limitBody(response.body, limitBytes, response.status));
    if (response.ok) return limited;
    // Throws ReplyBodyTooLargeError (as a connection error's cause, to the openai client) when over the limit.
    return withBody(response, await limited.arrayBuffer());
  };
}

/**
 * True for a body that cannot pass the limit: sent as is (no content encoding, which could inflate
 * it) with a declared length within the limit. Fetch reads no more than the declared length.
 */
function withinDeclaredLength(response: Response, limitBytes: number): boolean {
  const encoding = response.headers.get('content-encoding');
  if (encoding !== null && encoding.trim().toLowerCase() !== 'identity') return false;
  const declared = response.headers.get('content-length');
  if (declared === null || !/^\s*\d+\s*$/.test(declared)) return false;
  return Number(declared) <= limitBytes;
}

/**
 * `body` passed through a counter that errors the stream past `limitBytes`. Erroring the transform
 * cancels the source, which makes Node's fetch abort the request and close the connection.
 */
export function limitBody(body: ReadableStream<Uint8Array>, limitBytes: number, status: number): ReadableStream<Uint8Array> {
  let received = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        received += chunk.byteLength;
        if (received > limitBytes) {
          controller.error(new ReplyBodyTooLargeError(limitBytes, received, status));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
}

/**
 * A response like `response` with another body. Its headers still name the server's encoding; that
 * does not matter, since a constructed response never decodes again.
 */
function withBody(response: Response, body: ConstructorParameters<typeof Response>[0]): Response {
  const copy = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  Object.defineProperty(copy, 'url', { value: response.url });
  return copy;
}

/** The `ReplyBodyTooLargeError` in `error` or its causes (the openai client wraps fetch errors), if any. */
export function replyBodyTooLarge(error: unknown): ReplyBodyTooLargeError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    if (current instanceof ReplyBodyTooLargeError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
