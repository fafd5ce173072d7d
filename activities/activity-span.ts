/**
 * Spans of Loopwright's own inside activities (`loopwright.model_call`, `loopwright.tool_call`).
 *
 * A span is made only inside a traced activity: when the worker runs with tracing on, the
 * OpenTelemetry activity interceptor of `@temporalio/interceptors-opentelemetry` opens a
 * `RunActivity:<type>` span and makes it active, and ours becomes its child. Without it (tracing
 * off, or outside an activity) `fn` gets a span that records nothing, so even a process with a
 * tracer provider of its own sees no Loopwright spans from an untraced worker.
 *
 * Attributes describe the work (model, tokens, tool, path, outcome), never message contents,
 * file contents or secrets.
 */
import { type Attributes, INVALID_SPAN_CONTEXT, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';

/** Name of the tracer of Loopwright's own spans. */
export const TRACER_NAME = 'loopwright';

const NOT_RECORDING: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Run `fn` in the span `name`, a child of the active activity span, when there is one. When `fn`
 * throws, the span gets status ERROR and `error.type` (the failure type, `cancelled`, or the
 * error's name); `fn` may mark other failures itself.
 */
export async function inActivitySpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  if (trace.getActiveSpan() === undefined) return fn(NOT_RECORDING);
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.setAttribute('error.type', errorType(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A short, stable name for what went wrong. */
export function errorType(error: unknown): string {
  if (error instanceof CancelledFailure) return 'cancelled';
  if (error instanceof ApplicationFailure && error.type) return error.type;
  if (error instanceof Error) return error.name;
  return typeof error;
}
