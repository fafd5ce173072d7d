/**
 * OpenTelemetry traces: on when the standard `OTEL_*` variables ask for them, off otherwise.
 *
 * Temporal's interceptors (`@temporalio/interceptors-opentelemetry`) trace the client (start,
 * update, signal, query), the workflow (run, handle update/signal) and the activities (start and
 * run, local ones too), carrying the trace context in Temporal headers; Loopwright adds its own
 * spans: `loopwright.turn` in the workflow, `loopwright.model_call` and `loopwright.tool_call` in
 * the activities, and `loopwright <command>` around a command-line session command.
 *
 * Switched on by `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or by
 * `OTEL_TRACES_EXPORTER=otlp` / `console`; off with `OTEL_SDK_DISABLED=true`,
 * `OTEL_TRACES_EXPORTER=none`, or when none of these is set. Spans go over OTLP/HTTP (JSON bodies)
 * through a batch span processor; the exporter reads the other `OTEL_EXPORTER_OTLP_*` variables
 * (headers, timeout) and the processor the `OTEL_BSP_*` ones. `OTEL_SERVICE_NAME` names the service
 * (default `loopwright`).
 *
 * This module loads only `@opentelemetry/api` up front; the SDK, the exporter and the Temporal
 * interceptors are loaded when tracing is on.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import { type Context, type ContextManager, diag, type DiagLogger, DiagLogLevel, ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { WorkerOptions, WorkerPlugin } from '@temporalio/worker';
import { TRACING_BUNDLE_MARKER } from '../workflows/tracing/tracing-interceptors';

/** A setting that cannot work; the message names the variable. */
export class TracingConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TracingConfigError';
  }
}

/** Where a worker's (and a client's) spans go. */
export interface TracingOptions {
  /** Receives every span: the workflow's (through the interceptors' sink) and the process's. */
  spanProcessor: SpanProcessor;
  /** `service.name` and friends (default: `OTEL_SERVICE_NAME`, else `loopwright`). */
  resource?: Resource;
}

/** Exporters Loopwright can send spans to. */
export type TracesExporter = 'otlp' | 'console';

/** What the environment asks for, once checked. */
export interface TracingSettings {
  exporters: TracesExporter[];
  serviceName: string;
  /** The OTLP/HTTP traces URL, when `otlp` is one of the exporters. */
  otlpUrl?: string;
}

/** Service name when `OTEL_SERVICE_NAME` is not set. */
export const DEFAULT_SERVICE_NAME = 'loopwright';

/** Where an OTLP/HTTP collector listens by default. */
const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';

/** Name of the tracer of Loopwright's own spans (the same as activities/activity-span.ts). */
const TRACER_NAME = 'loopwright';

/**
 * Decide from `env` whether tracing is on, and check its settings. Undefined means off. Throws
 * `TracingConfigError`, naming the variable, for a setting that cannot work.
 */
export function tracingSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): TracingSettings | undefined {
  const value = (name: string): string | undefined => {
    const raw = env[name]?.trim();
    return raw ? raw : undefined;
  };
  if (value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const named = (value('OTEL_TRACES_EXPORTER') ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  for (const name of named) {
    if (name !== 'otlp' && name !== 'console' && name !== 'none') {
      throw new TracingConfigError(`OTEL_TRACES_EXPORTER names "${name}", which Loopwright does not support: use otlp, console or none`);
    }
  }
  if (named.includes('none')) return undefined;
  const tracesEndpoint = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = value('OTEL_EXPORTER_OTLP_ENDPOINT');
  const exporters = [...new Set(named)] as TracesExporter[];
  if (exporters.length === 0 && (tracesEndpoint || endpoint)) exporters.push('otlp');
  if (exporters.length === 0) return undefined;
  const settings: TracingSettings = { exporters, serviceName: value('OTEL_SERVICE_NAME') ?? DEFAULT_SERVICE_NAME };
  if (exporters.includes('otlp')) {
    for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
      const protocol = value(name);
      if (protocol === undefined) continue;
      // Loopwright sends OTLP over HTTP with JSON bodies, which OTLP/HTTP receivers accept.
      if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
        throw new TracingConfigError(`${name} is "${protocol}": Loopwright exports traces over OTLP/HTTP; use http/protobuf or http/json (and the HTTP port, usually 4318)`);
      }
      break;
    }
    settings.otlpUrl = tracesEndpoint
      ? checkedUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', tracesEndpoint)
      : checkedUrl(endpoint ? 'OTEL_EXPORTER_OTLP_ENDPOINT' : 'the default endpoint', `${(endpoint ?? DEFAULT_OTLP_ENDPOINT).replace(/\/+$/, '')}/v1/traces`);
  }
  return settings;
}

function checkedUrl(name: string, url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TracingConfigError(`${name} is not a URL: "${url}" (e.g. http://localhost:4318)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TracingConfigError(`${name} must be an http:// or https:// URL, got "${url}" (OTLP over gRPC is not supported; use the HTTP port, usually 4318)`);
  }
  return url;
}

/** The resource of Loopwright's spans: the SDK's defaults, `OTEL_RESOURCE_ATTRIBUTES`, and the service name. */
export async function tracingResource(serviceName: string = DEFAULT_SERVICE_NAME): Promise<Resource> {
  const { Resource, envDetectorSync } = await import('@opentelemetry/resources');
  return Resource.default()
    .merge(envDetectorSync.detect())
    .merge(new Resource({ 'service.name': serviceName }));
}

/** Build the span processor and resource the settings ask for (not yet installed). */
export async function tracingFromSettings(settings: TracingSettings): Promise<Required<TracingOptions>> {
  const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const processors: SpanProcessor[] = [];
  if (settings.exporters.includes('otlp')) {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.otlpUrl })));
  }
  // Spans on stderr, one JSON line each: stdout stays the command's own output.
  if (settings.exporters.includes('console')) processors.push(new BatchSpanProcessor(stderrExporter()));
  const spanProcessor = processors.length === 1 ? processors[0]! : new FanOutProcessor(processors);
  return { spanProcessor, resource: await tracingResource(settings.serviceName) };
}

const fromEnv = new WeakMap<NodeJS.ProcessEnv, Promise<Required<TracingOptions> | undefined>>();

/**
 * The tracing the environment asks for, set up and installed once per process (and per `env`
 * object); undefined when off. Rejects with `TracingConfigError` on a bad setting.
 */
export function tracingFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<Required<TracingOptions> | undefined> {
  let pending = fromEnv.get(env);
  if (!pending) {
    pending = (async () => {
      const settings = tracingSettingsFromEnv(env);
      if (!settings) return undefined;
      const tracing = await tracingFromSettings(settings);
      await installTracing(tracing);
      return tracing;
    })();
    fromEnv.set(env, pending);
  }
  return pending;
}

/** The process's tracer provider and the processors it feeds, once installed. */
interface Installed {
  provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> };
  hub: FanOutProcessor;
  contextManager: ContextManager;
}

let installed: Installed | undefined;
let installing: Promise<Installed> | undefined;

/**
 * Make `options` the process's tracing: a tracer provider (registered as OpenTelemetry's global
 * one, with a context manager on AsyncLocalStorage and the W3C propagators) whose spans go to
 * `options.spanProcessor`. The activity interceptors, the client interceptors and Loopwright's
 * activity spans use the global provider. One provider serves the whole process: installing a
 * second processor adds it (its spans then carry the first resource).
 */
export async function installTracing(options: TracingOptions): Promise<void> {
  if (installing) {
    (await installing).hub.add(options.spanProcessor);
    return;
  }
  installing = (async () => {
    const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
    const hub = new FanOutProcessor([options.spanProcessor]);
    const provider = new BasicTracerProvider({ resource: options.resource ?? (await tracingResource()), spanProcessors: [hub] });
    installErrorLogger();
    const contextManager = new AsyncLocalStorageContextManager();
    provider.register({ contextManager });
    // An application that registered a provider of its own keeps it: Loopwright's process spans go there.
    const global = trace.getTracerProvider() as { getDelegate?: () => unknown };
    if (global !== provider && global.getDelegate?.() !== provider) {
      diag.warn('Loopwright: a global OpenTelemetry tracer provider was already registered; activity and client spans go to it, workflow spans to the span processor given');
    }
    installed = { provider, hub, contextManager };
    return installed;
  })();
  await installing;
}

/** Whether this process has tracing installed. */
export function tracingInstalled(): boolean {
  return installed !== undefined;
}

/** Send the spans waiting in the processors; resolves after at most `timeoutMs`. */
export async function flushTracing(timeoutMs = 5_000): Promise<void> {
  if (!installed) return;
  await bounded(installed.provider.forceFlush(), timeoutMs);
}

/** Flush and stop the process's tracing (once the worker and the command are done). */
export async function shutdownTracing(timeoutMs = 5_000): Promise<void> {
  const current = installed;
  if (!current) return;
  installed = undefined;
  installing = undefined;
  await bounded(current.provider.shutdown(), timeoutMs);
  // Its AsyncLocalStorage leaves Node's list of live ones, which every later async step of the
  // process would otherwise pass through (an installTracing after this makes a new one).
  current.contextManager.disable();
}

async function bounded(work: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The workflow interceptor modules a traced workflow bundle needs: Temporal's OpenTelemetry
 * workflow interceptors and Loopwright's (the `loopwright.turn` span). Pass them to
 * `bundleWorkflowCode({ workflowInterceptorModules })` to prebuild a bundle that traces; a bundle
 * without them runs, but makes no workflow spans.
 */
export function tracingWorkflowInterceptorModules(): string[] {
  return [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'), LOOPWRIGHT_WORKFLOW_INTERCEPTORS];
}

/** Loopwright's own workflow interceptor module (see workflows/tracing/tracing-interceptors.ts). */
export const LOOPWRIGHT_WORKFLOW_INTERCEPTORS = require.resolve('../workflows/tracing/tracing-interceptors');

/** Whether a prebuilt workflow bundle (its code) includes Loopwright's tracing interceptors. */
export function bundleCanTrace(code: string): boolean {
  return code.includes(TRACING_BUNDLE_MARKER);
}

/**
 * What a worker needs to trace, on top of `code` (its `workflowBundle` or `workflowsPath`):
 * Temporal's plugin (workflow and activity interceptors, the sink that exports workflow spans) and,
 * when bundling from source, Loopwright's workflow interceptor module.
 *
 * Workflow interceptors are part of the bundle: with a prebuilt `workflowBundle` the SDK ignores the
 * plugin's workflow modules. A prebuilt bundle made with `tracingWorkflowInterceptorModules()` is
 * used as it is; one made without them would trace activities only, so the worker bundles from
 * `workflowsPath` instead, with the interceptors, and says so in a warning.
 */
export async function tracingWorkerOptions(
  tracing: TracingOptions,
  code: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'>,
  workflowsPath: string,
  /** The bundle is known to include the interceptors (the build's traced bundle): not read to check. */
  bundleTraces = false,
): Promise<Partial<WorkerOptions>> {
  const plugins = [await tracingWorkerPlugin(tracing)];
  const fromSource = { workflowBundle: undefined, workflowsPath, interceptors: { workflowModules: [LOOPWRIGHT_WORKFLOW_INTERCEPTORS] }, plugins };
  const bundle = code.workflowBundle;
  if (!bundle) return fromSource;
  if (bundleTraces) return { plugins };
  const bundleCode = 'code' in bundle ? bundle.code : await fs.promises.readFile(bundle.codePath, 'utf8');
  if (bundleCanTrace(bundleCode)) return { plugins };
  const { Runtime } = await import('@temporalio/worker');
  Runtime.instance().logger.warn(
    'Tracing is on but the prebuilt workflow bundle has no tracing interceptors: bundling the workflows from source instead ' +
      '(prebuild with bundleWorkflowCode({ workflowInterceptorModules: tracingWorkflowInterceptorModules() }) to avoid this)',
    { workflowsPath },
  );
  return fromSource;
}

/** The worker plugin that traces workflows and activities (Temporal's), for `WorkerOptions.plugins`. */
export async function tracingWorkerPlugin(options: TracingOptions): Promise<WorkerPlugin> {
  const { OpenTelemetryPlugin } = await import('@temporalio/interceptors-opentelemetry');
  return new OpenTelemetryPlugin({ spanProcessor: options.spanProcessor, resource: options.resource ?? (await tracingResource()) });
}

/** Client interceptors that start a trace (or continue the active one) for each workflow call. */
export async function tracingClientInterceptors(): Promise<{ workflow: WorkflowClientInterceptor[] }> {
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry');
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}

/**
 * Run `fn` as the root span `loopwright <command>`, so that every client call it makes (start,
 * update, query) and the workflow and activity spans they lead to share one trace. The span
 * records the exit status `fn` resolves to. `onExit` registers a clean-up for a signal that ends
 * the process first (the span then ends marked `loopwright.stopped` and is flushed). Without
 * tracing it simply runs `fn`.
 */
export async function inCommandSpan(command: string, fn: () => Promise<number>, onExit?: (cleanup: () => Promise<void>) => () => void): Promise<number> {
  if (!installed) return fn();
  return trace.getTracer(TRACER_NAME).startActiveSpan(`loopwright ${command}`, { attributes: { 'loopwright.command': command } }, async (span) => {
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      span.end();
    };
    const unregister = onExit?.(async () => {
      span.setAttribute('loopwright.stopped', true);
      end();
      await flushTracing();
    });
    try {
      const code = await fn();
      span.setAttribute('loopwright.exit_code', code);
      if (code !== 0) span.setStatus({ code: SpanStatusCode.ERROR, message: `exit status ${code}` });
      return code;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      unregister?.();
      end();
    }
  });
}

/** Feeds every span to several processors; more can be added while it runs. */
class FanOutProcessor implements SpanProcessor {
  private readonly processors: Set<SpanProcessor>;

  constructor(processors: SpanProcessor[]) {
    this.processors = new Set(processors);
  }

  add(processor: SpanProcessor): void {
    this.processors.add(processor);
  }

  onStart(span: Parameters<SpanProcessor['onStart']>[0], parentContext: Context): void {
    for (const processor of this.processors) processor.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    for (const processor of this.processors) processor.onEnd(span);
  }

  async forceFlush(): Promise<void> {
    await Promise.all([...this.processors].map((processor) => processor.forceFlush()));
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.processors].map((processor) => processor.shutdown()));
  }
}

/** OpenTelemetry's context kept in AsyncLocalStorage, so the active span follows async calls (as the Node SDK does). */
class AsyncLocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const callback = thisArg === undefined ? fn : (fn.bind(thisArg) as F);
    return this.storage.run(context, callback, ...args);
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const withContext = this.with.bind(this);
    return function (this: unknown, ...args: unknown[]): unknown {
      return withContext(context, () => (target as (...a: unknown[]) => unknown).apply(this, args));
    } as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}

/** Spans as JSON lines on stderr (`OTEL_TRACES_EXPORTER=console`). */
function stderrExporter(): { export(spans: ReadableSpan[], done: (result: { code: number }) => void): void; shutdown(): Promise<void> } {
  return {
    export(spans, done) {
      for (const span of spans) {
        const context = span.spanContext();
        const [seconds, nanos] = span.duration;
        process.stderr.write(
          `${JSON.stringify({
            name: span.name,
            traceId: context.traceId,
            spanId: context.spanId,
            parentSpanId: span.parentSpanId,
            durationMs: Math.round(seconds * 1000 + nanos / 1e6),
            status: span.status,
            attributes: span.attributes,
          })}\n`,
        );
      }
      done({ code: 0 });
    },
    shutdown: async () => undefined,
  };
}

/**
 * OpenTelemetry reports export failures (a collector that is down) through its diagnostic logger,
 * silent by default: say the first one on stderr, so a wrong endpoint does not go unnoticed.
 */
function installErrorLogger(): void {
  let said = false;
  const once = (message: string, ...args: unknown[]): void => {
    if (said) return;
    said = true;
    const detail = args
      .map((arg) => (arg instanceof Error ? arg.message : typeof arg === 'string' ? arg : ''))
      .filter(Boolean)
      .join(' ');
    process.stderr.write(`OpenTelemetry: ${message}${detail ? ` ${detail}` : ''} (further tracing errors are not shown)\n`);
  };
  const logger: DiagLogger = { error: once, warn: once, info: () => undefined, debug: () => undefined, verbose: () => undefined };
  diag.setLogger(logger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
}
