/**
 * Workflow interceptor module that turns on Loopwright's own workflow spans (`loopwright.turn`).
 * Not a workflow: it is bundled, next to `@temporalio/interceptors-opentelemetry`'s workflow
 * interceptors, only when tracing is on (see `tracingWorkflowInterceptorModules` in
 * worker/tracing.ts), so a worker without tracing never loads OpenTelemetry into its workflows.
 *
 * It intercepts nothing; it installs the span runner of trace-hook.ts. Spans are made with the
 * tracer provider the Temporal interceptors register inside the sandbox (span ids come from the
 * sandbox's seeded random numbers, times from workflow time, so replay sees the same spans) and
 * leave through their `exporter` sink, which does not run during replay.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { installSpanRunner, type SpanRunner } from './trace-hook';

/**
 * Found in the code of any workflow bundle that contains this module: createWorker looks for it
 * to tell whether a prebuilt bundle can trace.
 */
export const TRACING_BUNDLE_MARKER = 'loopwright:tracing-interceptors:v1';

const runSpan: SpanRunner = (name, attributes, fn, end) =>
  trace.getTracer('loopwright', TRACING_BUNDLE_MARKER).startActiveSpan(name, { attributes }, (span) =>
    fn().then(
      (result) => {
        const ending = end?.(result) ?? {};
        if (ending.attributes) span.setAttributes(ending.attributes);
        span.setStatus(ending.error !== undefined ? { code: SpanStatusCode.ERROR, message: ending.error } : { code: SpanStatusCode.OK });
        span.end();
        return result;
      },
      (error: unknown) => {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        span.end();
        throw error;
      },
    ),
  );

export const interceptors: WorkflowInterceptorsFactory = () => {
  installSpanRunner(runSpan);
  return {};
};
