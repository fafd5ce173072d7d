/**
 * Runs a tool as a Temporal activity. A tool on its own never heartbeats, so an interrupt (the
 * workflow cancelling the activity) would never reach it, and a read that blocks (a FIFO, a hung
 * network mount) would keep the activity running forever. The wrapper heartbeats while the tool
 * runs, rejects at once with the SDK's `CancelledFailure` when the activity is cancelled (even if
 * the file operation underneath is still stuck) and hands the tool the cancellation signal. It also
 * bounds the size of what a tool returns, so no result can break a Temporal payload.
 */
import type { Span } from '@opentelemetry/api';
import { SpanStatusCode } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { toolSpec } from '../../common/tools';
import { argumentRecord, type ToolSpec, targetOf } from '../../common/tools/tool-spec';
import { inActivitySpan } from '../activity-span';
import type { ToolProgress } from '../../common/tool-progress';

/**
 * Largest tool result, in bytes, measured as `Buffer.byteLength(JSON.stringify(JSON.stringify(result)))`:
 * the result becomes the JSON text of a tool message, which is JSON-encoded again inside a payload.
 * Half of Temporal's 2 MB payload limit, leaving room for the rest of the message and history.
 */
export const MAX_TOOL_RESULT_BYTES = 1_000_000;

/** How often a running tool heartbeats (sooner when the activity's heartbeat timeout asks for it). */
export const TOOL_HEARTBEAT_INTERVAL_MS = 1000;

/** What a tool may receive besides its arguments when it runs inside an activity. */
export interface ToolRunOptions {
  /** Aborted (with a `CancelledFailure` as reason) when the activity is cancelled. */
  signal?: AbortSignal;
  /**
   * The activity's attempt (`Context.current().info.attempt`; 1 when absent, as outside an
   * activity). Above 1 an earlier attempt may have made its change before its result was lost, so
   * a tool whose change is not idempotent checks for it first (see `file-edits.ts`).
   */
  attempt?: number;
  /**
   * Report progress a reader may show while the tool runs (a command's output so far): sent as the
   * activity's heartbeat details, which Temporal keeps outside history (only the latest), and read
   * by `follow()`. Each report replaces the one before; keep it small.
   */
  progress?: (details: ToolProgress) => void;
}

/** A tool function; `options` is given only by the activity wrapper. */
export type ToolFunction = (ctx: RuntimeContext, args: unknown, options?: ToolRunOptions) => Promise<ToolResult>;

/** A built-in tool on the worker: its definition and the function that runs it. */
export interface ToolImplementation {
  spec: ToolSpec;
  run: ToolFunction;
}

/** A tool as the worker registers it: the arguments the workflow passes, nothing more. */
export type ToolActivity = (ctx: RuntimeContext, args: unknown) => Promise<ToolResult>;

/** Settings of `toToolActivity`; the defaults are what the worker uses. */
export interface ToolActivityOptions {
  /** Largest result in bytes (default `MAX_TOOL_RESULT_BYTES`). */
  maxResultBytes?: number;
  /** Heartbeat cadence in ms (default `TOOL_HEARTBEAT_INTERVAL_MS`). */
  heartbeatIntervalMs?: number;
  /**
   * Run inside another activity (inline reads, in the model call): no heartbeat at once (that
   * activity is already running, and a heartbeat is a call to the server), and the span says so.
   */
  inline?: boolean;
}

/**
 * Wraps the tool `name` for use as an activity implementation. Inside an activity the returned
 * function heartbeats at once and then periodically, passes the cancellation signal to the tool,
 * and rejects with the activity's `CancelledFailure` as soon as it is cancelled; its timer is
 * stopped however the tool ends. Outside an activity (tests, an in-process loop) it simply runs the
 * tool. Either way a result over the size limit is replaced by `{success: false, error}`.
 */
export function toToolActivity(name: string, tool: ToolFunction, options: ToolActivityOptions = {}): ToolActivity {
  const maxResultBytes = options.maxResultBytes ?? MAX_TOOL_RESULT_BYTES;
  const intervalMs = options.heartbeatIntervalMs ?? TOOL_HEARTBEAT_INTERVAL_MS;
  return async (ctx: RuntimeContext, args: unknown): Promise<ToolResult> => {
    const context = currentActivityContext();
    if (context === undefined) return boundToolResult(name, await tool(ctx, args), maxResultBytes);
    const attributes = toolSpanAttributes(name, args, context);
    return inActivitySpan('loopwright.tool_call', options.inline ? { ...attributes, 'loopwright.inline': true } : attributes, async (span) => {
      const signal = context.cancellationSignal;
      if (signal.aborted) throw cancellationOf(signal);
      const heartbeat = startToolHeartbeat(context, intervalMs, options.inline !== true);
      const stopHeartbeat = heartbeat.stop;
      try {
        const progress = options.inline === true || context.info.isLocal ? undefined : heartbeat.report;
        // Started inside a promise so that even a synchronous throw becomes a rejection the race sees.
        const running = new Promise<ToolResult>((resolve) => resolve(tool(ctx, args, { signal, attempt: context.info.attempt, ...(progress ? { progress } : {}) })));
        // The race settles with the cancellation even while the tool's own promise never settles.
        const result = boundToolResult(name, await Promise.race([running, context.cancelled]), maxResultBytes);
        const tags = { tool: name, success: String(result.success) };
        context.metricMeter.createCounter('loopwright_tool_calls', 'calls', 'Tool calls by tool and outcome').add(1, tags);
        if (!result.success) context.metricMeter.createCounter('loopwright_tool_errors', 'calls', 'Tool calls that returned an error to the model').add(1, { tool: name });
        recordToolOutcome(span, result);
        return result;
      } catch (error) {
        // A tool that listens to the signal may fail first with an AbortError; report the cancellation itself.
        if (signal.aborted) throw cancellationOf(signal);
        throw error;
      } finally {
        stopHeartbeat();
      }
    });
  };
}

/** Longest path put on a span. */
const MAX_SPAN_PATH_CHARS = 512;

/**
 * What a `loopwright.tool_call` span starts with: the tool, the path it names as the model wrote it
 * (its `target` argument, e.g. `{bundle-root}/config.yaml`; never contents), the attempt and whether it runs as a local activity.
 */
function toolSpanAttributes(name: string, args: unknown, context: Context): Record<string, string | number | boolean> {
  const target = targetOf(toolSpec(name), argumentRecord(args));
  return {
    'gen_ai.tool.name': name,
    'loopwright.tool': name,
    ...(typeof target === 'string' ? { 'loopwright.tool.path': target.slice(0, MAX_SPAN_PATH_CHARS) } : {}),
    'loopwright.attempt': context.info.attempt,
    'loopwright.local_activity': context.info.isLocal,
  };
}

/**
 * Success or failure of a tool call on its span. A failure the model is told about is an error
 * result, not an exception; the span gets status ERROR and a short code: the system error code
 * (`ENOENT`) or the kind of refusal (`file_too_large`, `invalid_arguments`, ...), never the message.
 */
function recordToolOutcome(span: Span, result: ToolResult): void {
  span.setAttribute('loopwright.tool.success', result.success);
  if (result.success) return;
  const code = toolErrorCode(result.error);
  span.setAttributes({ 'loopwright.tool.error_code': code, 'error.type': code });
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}

/**
 * A short code for a tool's error message: the errno code it starts with (`ENOENT: no such file...`),
 * else its leading words (`File too large: ...` gives `file_too_large`), else `tool_error`.
 */
export function toolErrorCode(message: unknown): string {
  if (typeof message !== 'string') return 'tool_error';
  const errno = /^(E[A-Z0-9]{2,}):/.exec(message);
  if (errno) return errno[1]!;
  if (message.startsWith('Invalid arguments for ')) return 'invalid_arguments';
  const lead = /^([A-Za-z][A-Za-z -]{0,40}?):/.exec(message);
  if (lead) return lead[1]!.trim().toLowerCase().replace(/[ -]+/g, '_');
  if (/^The result of \S+ is \d+ bytes, over the limit/.test(message)) return 'result_too_large';
  return 'tool_error';
}

/** The size of `result` once it is a tool message's JSON text inside a JSON payload, in bytes. */
export function encodedToolResultBytes(result: ToolResult): number {
  return Buffer.byteLength(JSON.stringify(JSON.stringify(result)) ?? 'null', 'utf8');
}

/** `result` itself, or an error result telling the model it was too large and what to do instead. */
export function boundToolResult(tool: string, result: ToolResult, maxBytes: number = MAX_TOOL_RESULT_BYTES): ToolResult {
  const bytes = encodedToolResultBytes(result);
  if (bytes <= maxBytes) return result;
  return {
    success: false,
    error: `The result of ${tool} is ${bytes} bytes, over the limit of ${maxBytes} bytes for one tool result; ask for a smaller file or part`,
  };
}

/** The running activity's context, or `undefined` when called outside an activity. */
function currentActivityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/**
 * Heartbeats now and every `intervalMs` (or half the heartbeat timeout, if shorter) until stopped.
 * `report` sends the tool's latest progress at once (the SDK throttles heartbeats), and every later
 * beat carries it too: a heartbeat replaces the details of the one before.
 */
function startToolHeartbeat(context: Context, intervalMs: number, atOnce: boolean): { stop: () => void; report: (details: ToolProgress) => void } {
  // A local activity has no server-side record to heartbeat; the worker cancels it directly.
  if (context.info.isLocal) return { stop: () => undefined, report: () => undefined };
  const timeoutMs = context.info.heartbeatTimeoutMs;
  const every = timeoutMs && timeoutMs > 0 ? Math.min(intervalMs, Math.max(1, Math.floor(timeoutMs / 2))) : intervalMs;
  let latest: ToolProgress | undefined;
  let stopped = false;
  const beat = (): void => {
    if (stopped) return;
    try {
      if (latest === undefined) context.heartbeat();
      else context.heartbeat(latest);
    } catch {
      // A heartbeat fails only while the activity is being torn down; the tool's outcome (or the
      // cancellation) is what must surface.
    }
  };
  if (atOnce) beat();
  const timer = setInterval(beat, every);
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
    report: (details) => {
      latest = details;
      beat();
    },
  };
}

/** The SDK aborts the signal with a `CancelledFailure`; anything else is wrapped in one. */
function cancellationOf(signal: AbortSignal): CancelledFailure {
  const reason: unknown = signal.reason;
  if (reason instanceof CancelledFailure) return reason;
  return new CancelledFailure(typeof reason === 'string' ? reason : 'Tool activity cancelled');
}
