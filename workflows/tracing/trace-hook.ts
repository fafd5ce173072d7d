/**
 * Spans of the workflow's own (`loopwright.turn`), without OpenTelemetry in the workflow code.
 *
 * Workflow modules are evaluated again for every workflow the worker caches, so whatever they
 * import costs memory per session even when tracing is off. This module imports nothing: by default
 * `withSpan` just runs `fn`. The tracing workflow interceptor module (tracing-interceptors.ts), which
 * is bundled only when tracing is on, installs a runner that opens a real span, using the
 * OpenTelemetry tracer that `@temporalio/interceptors-opentelemetry` registers in the sandbox.
 *
 * A span never changes what the workflow does: no activity, timer or other command depends on it.
 */

/** Attribute values a workflow span takes. */
export type SpanAttributes = Record<string, string | number | boolean>;

/** What a span records when its work is done: more attributes, and an error when it failed. */
export interface SpanEnd {
  attributes?: SpanAttributes;
  /** A short description; the span's status becomes ERROR. */
  error?: string;
}

/**
 * Runs `fn` inside a span called `name`, active for everything `fn` schedules; `end` describes the
 * result. Without tracing it returns `fn()` itself, not a promise chained to it, so the workflow
 * takes exactly the steps it took before spans existed.
 */
export type SpanRunner = <T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>, end?: (result: T) => SpanEnd) => Promise<T>;

const untraced: SpanRunner = (_name, _attributes, fn) => fn();

let runner: SpanRunner = untraced;

/** Install the runner of this workflow's spans (called by the tracing interceptor module). */
export function installSpanRunner(next: SpanRunner): void {
  runner = next;
}

/** True when spans are recorded (the tracing interceptor module installed its runner). */
export function tracing(): boolean {
  return runner !== untraced;
}

/** Run `fn` in a span when tracing is on; otherwise simply run it. */
export function withSpan<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>, end?: (result: T) => SpanEnd): Promise<T> {
  return runner(name, attributes, fn, end);
}
