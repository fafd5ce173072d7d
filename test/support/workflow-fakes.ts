/**
 * Workflow code (workflows/**) run in plain Node, for unit tests without a Temporal server.
 *
 * - `fakeWorkflowModule()`: `@temporalio/workflow` with the functions that need a workflow context
 *   (`log`, `metricMeter`, `workflowInfo`, `patched`, `condition`, `CancellationScope`,
 *   `executeChild`, `getExternalWorkflowHandle`, `setHandler`) replaced by fakes that record into
 *   `workflowFake`; everything pure (`isCancellation`, the failure classes, `defineSignal`...) is
 *   the real one. A test file installs it with one line, which jest hoists above its imports:
 *
 *       jest.mock('@temporalio/workflow', () => jest.requireActual('../../support/workflow-fakes').fakeWorkflowModule());
 *
 * - `FakeActivities`: the session's activity stubs (`SessionActivityStubs`), each recording its
 *   calls with their arguments and Web UI summary, answering from a script the test gives.
 * - Builders of messages and of a `HashedTranscript`.
 *
 * This module must not import, at run time, anything that imports `@temporalio/workflow`: the mock's
 * factory loads it while that module is being required.
 */
import type * as WorkflowModule from '@temporalio/workflow';
import type { ActivityFunction, Duration, SearchAttributes } from '@temporalio/common';
import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import type { ActivityFunctionWithOptions, WorkflowInfo } from '@temporalio/workflow';
import type { AssistantMessage, ChatMessage, TokenUsage, ToolCall, ToolMessage, ToolResult } from '../../common/messages';
import type { ModelCallResult, ModelFailureDetails } from '../../common/model-call';
import { TOOL_SPECS } from '../../common/tools';
import { HashedTranscript } from '../../common/transcript';
import type { SessionActivityStubs } from '../../workflows/stubs/activity-proxies';

// ---------------------------------------------------------------------------------------------
// The workflow module
// ---------------------------------------------------------------------------------------------

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface LogEntry {
  level: LogLevel;
  message: string;
  attrs?: Record<string, unknown>;
}

export interface MetricEntry {
  kind: 'counter' | 'histogram' | 'gauge';
  name: string;
  value: number;
  attributes: Record<string, unknown>;
}

/** A signal sent through `getExternalWorkflowHandle(workflowId).signal(...)`. */
export interface SentSignal {
  workflowId: string;
  signal: string;
  args: unknown[];
}

/** A child started with `executeChild`. */
export interface StartedChild {
  workflowType: string;
  options: Record<string, unknown>;
}

/** What a scripted call answers: a value, an error to fail with, or a function of the call's arguments. */
export type Answer = unknown;

/** What the fake workflow module recorded, and how it answers. Reset before each test (`reset`). */
export class WorkflowFake {
  logs: LogEntry[] = [];
  metrics: MetricEntry[] = [];
  /** Patch ids `patched` answers false for (a history recorded before them); any other is on, as in a new workflow. */
  unpatched = new Set<string>();
  /** Every `patched` and `deprecatePatch` id asked, in order. */
  patchesAsked: string[] = [];
  /** Fields `workflowInfo()` answers with, over the defaults. */
  info: Partial<WorkflowInfo> = {};
  /** `CancellationScope.current().consideredCancelled`: the turn's scope was cancelled. */
  scopeCancelled = false;
  /** Handlers installed with `setHandler`, by signal, query or update name. */
  handlers = new Map<string, (...args: never[]) => unknown>();
  signals: SentSignal[] = [];
  /** When set, `signal` through an external handle fails with it (the target is gone). */
  signalFailure: Error | undefined;
  children: StartedChild[] = [];
  private childAnswers: Answer[] = [];

  reset(): void {
    this.logs = [];
    this.metrics = [];
    this.unpatched = new Set();
    this.patchesAsked = [];
    this.info = {};
    this.scopeCancelled = false;
    this.handlers = new Map();
    this.signals = [];
    this.signalFailure = undefined;
    this.children = [];
    this.childAnswers = [];
  }

  /** Messages logged at `level` (every level when none is given). */
  logged(level?: LogLevel): string[] {
    return this.logs.filter((l) => level === undefined || l.level === level).map((l) => l.message);
  }

  /** The recorded values of metric `name`, with their attributes. */
  metric(name: string): MetricEntry[] {
    return this.metrics.filter((m) => m.name === name);
  }

  /** Answers of the next `executeChild` calls, in order (see `answerFrom`). */
  scriptChildren(...answers: Answer[]): void {
    this.childAnswers.push(...answers);
  }

  /** Deliver a signal (or run a query or update handler) installed with `setHandler`. */
  deliver(name: string, ...args: unknown[]): unknown {
    const handler = this.handlers.get(name);
    if (!handler) throw new Error(`no handler installed for ${name} (installed: ${[...this.handlers.keys()].join(', ') || 'none'})`);
    return (handler as (...a: unknown[]) => unknown)(...args);
  }

  workflowInfo(): WorkflowInfo {
    return {
      workflowId: 'wf-unit',
      runId: 'run-unit',
      workflowType: 'loopwrightSession',
      taskQueue: 'unit',
      namespace: 'default',
      firstExecutionRunId: 'run-unit',
      attempt: 1,
      historyLength: 1,
      historySize: 0,
      continueAsNewSuggested: false,
      searchAttributes: {} as SearchAttributes,
      memo: {},
      unsafe: { isReplaying: false, now: () => Date.now() },
      ...this.info,
    } as WorkflowInfo;
  }

  nextChild(workflowType: string, options: Record<string, unknown>): Promise<unknown> {
    this.children.push({ workflowType, options });
    if (this.childAnswers.length === 0) return Promise.reject(new Error(`no scripted answer for child workflow ${workflowType} (${String(options.workflowId)})`));
    return answerFrom(this.childAnswers.shift(), [options]);
  }
}

/** The one fake the mocked module and the tests share. */
export const workflowFake = new WorkflowFake();

/** `CancellationScope` as far as workflow code outside a workflow needs it: the current scope, and running `fn` in a new one. */
class FakeCancellationScope {
  get consideredCancelled(): boolean {
    return workflowFake.scopeCancelled;
  }
  static current(): FakeCancellationScope {
    return new FakeCancellationScope();
  }
  static cancellable<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }
  static nonCancellable<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }
}

/**
 * `condition(fn, timeout?)`: checks `fn` at once and then on every turn of the event loop; with a
 * timeout, answers false once that much real time passed (keep timeouts short in tests).
 */
function fakeCondition(fn: () => boolean, timeout?: Duration): Promise<boolean | void> {
  const deadline = timeout === undefined ? undefined : Date.now() + msToNumber(timeout);
  return new Promise((resolve) => {
    const check = (): void => {
      if (fn()) resolve(timeout === undefined ? undefined : true);
      else if (deadline !== undefined && Date.now() >= deadline) resolve(false);
      else setImmediate(check);
    };
    check();
  });
}

function nameOf(def: unknown): string {
  return typeof def === 'string' ? def : typeof def === 'function' ? def.name : String((def as { name?: unknown }).name);
}

function meterOf(kind: MetricEntry['kind']) {
  return (name: string) => {
    const record = (value: number, attributes: Record<string, unknown> = {}): void => {
      workflowFake.metrics.push({ kind, name, value, attributes });
    };
    return { name, add: record, record, set: record, withTags: () => ({ add: record, record, set: record }) };
  };
}

/** `@temporalio/workflow` with its workflow-context functions faked (see the file's header). */
export function fakeWorkflowModule(): typeof WorkflowModule {
  const actual = jest.requireActual<typeof WorkflowModule>('@temporalio/workflow');
  const log = Object.fromEntries(
    (['trace', 'debug', 'info', 'warn', 'error'] as const).map((level) => [
      level,
      (message: string, attrs?: Record<string, unknown>) => void workflowFake.logs.push({ level, message, ...(attrs ? { attrs } : {}) }),
    ]),
  );
  const metricMeter = { createCounter: meterOf('counter'), createHistogram: meterOf('histogram'), createGauge: meterOf('gauge') };
  const fakes = {
    log,
    metricMeter,
    workflowInfo: () => workflowFake.workflowInfo(),
    patched: (id: string) => {
      workflowFake.patchesAsked.push(id);
      return !workflowFake.unpatched.has(id);
    },
    deprecatePatch: (id: string) => void workflowFake.patchesAsked.push(id),
    condition: fakeCondition,
    CancellationScope: FakeCancellationScope,
    executeChild: (workflowType: unknown, options: Record<string, unknown> = {}) => workflowFake.nextChild(nameOf(workflowType), options),
    getExternalWorkflowHandle: (workflowId: string) => ({
      workflowId,
      signal: (def: unknown, ...args: unknown[]) => {
        workflowFake.signals.push({ workflowId, signal: nameOf(def), args });
        return workflowFake.signalFailure ? Promise.reject(workflowFake.signalFailure) : Promise.resolve();
      },
      cancel: () => Promise.resolve(),
    }),
    setHandler: (def: unknown, handler: ((...args: never[]) => unknown) | undefined) => {
      if (handler) workflowFake.handlers.set(nameOf(def), handler);
      else workflowFake.handlers.delete(nameOf(def));
    },
  };
  return { ...actual, ...fakes, __esModule: true } as unknown as typeof WorkflowModule;
}

// ---------------------------------------------------------------------------------------------
// Activity stubs
// ---------------------------------------------------------------------------------------------

/** One call of a fake activity. */
export interface ActivityCall {
  /** The activity type: `callModelV2`, `summarizeContext`, a tool's name... */
  name: string;
  args: unknown[];
  /** The Web UI summary it was scheduled with (`executeWithOptions`). */
  summary?: string;
  /** Scheduled as a local activity. */
  local: boolean;
}

/**
 * The answer a scripted call gives: an `Error` rejects with it, a function is called with the
 * call's arguments (and may return a value, a promise, or throw), anything else resolves as is.
 */
export function answerFrom(answer: Answer, args: unknown[]): Promise<unknown> {
  try {
    if (answer instanceof Error) return Promise.reject(answer);
    if (typeof answer === 'function') return Promise.resolve((answer as (...a: unknown[]) => unknown)(...args));
    return Promise.resolve(answer);
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

/**
 * `SessionActivityStubs` that record every call and answer from a script: `script(name, ...answers)`
 * queues answers that calls of `name` take in order; `respond(name, fn)` answers the calls left when
 * the queue is empty. A call with neither fails, naming the activity, so a test never waits on an
 * activity it did not expect.
 */
export class FakeActivities {
  readonly calls: ActivityCall[] = [];
  readonly stubs: SessionActivityStubs;
  private readonly queues = new Map<string, Answer[]>();
  private readonly responders = new Map<string, (...args: never[]) => unknown>();

  constructor() {
    const stub = <F extends ActivityFunction>(name: string, local = false): ActivityFunctionWithOptions<F> => {
      const run = (args: unknown[], summary?: string) => this.run(name, args, summary, local);
      const fn = ((...args: unknown[]) => run(args)) as unknown as ActivityFunctionWithOptions<F>;
      fn.executeWithOptions = ((options: { summary?: string }, args: unknown[]) => run(args, options.summary)) as ActivityFunctionWithOptions<F>['executeWithOptions'];
      return fn;
    };
    this.stubs = {
      initializeAgent: stub('initializeAgent'),
      callModel: stub('callModel'),
      callModelV2: stub('callModelV2'),
      summarizeContext: stub('summarizeContext'),
      describeModel: stub('describeModel'),
      loadTranscriptPage: stub('loadTranscriptPage'),
      tools: Object.fromEntries(TOOL_SPECS.map((spec) => [spec.name, stub(spec.name)])),
      // The same answers as `tools` (a test tells them apart by the summary, or does not need to).
      repeatable: Object.fromEntries(TOOL_SPECS.filter((spec) => spec.retries === 'once').map((spec) => [spec.name, stub(spec.name)])),
      localReads: Object.fromEntries(TOOL_SPECS.filter((spec) => spec.access === 'read').map((spec) => [spec.name, stub(spec.name, true)])),
      customTool: (name, _retries, local) => stub(name, local),
      listTools: stub('listTools'),
      callMcpTool: stub('callMcpTool'),
      verifyDocument: stub('verifyDocument'),
      checkPins: stub('checkPins'),
      loadEvalTurn: stub('loadEvalTurn'),
    };
  }

  /** Queue answers for the next calls of `name`. */
  script(name: string, ...answers: Answer[]): this {
    this.queues.set(name, [...(this.queues.get(name) ?? []), ...answers]);
    return this;
  }

  /** Answer calls of `name` that find no queued answer. */
  respond<A extends unknown[]>(name: string, fn: (...args: A) => unknown): this {
    this.responders.set(name, fn as (...args: never[]) => unknown);
    return this;
  }

  /** The calls of `name`, in order. */
  callsOf(name: string): ActivityCall[] {
    return this.calls.filter((c) => c.name === name);
  }

  /** The first argument of each call of `name` (every model activity takes one input object). */
  inputsOf<T>(name: string): T[] {
    return this.callsOf(name).map((c) => c.args[0] as T);
  }

  /** Answers queued and not taken, by activity (a test may check its script was used up). */
  unused(): Record<string, number> {
    return Object.fromEntries([...this.queues].filter(([, q]) => q.length > 0).map(([name, q]) => [name, q.length]));
  }

  private run(name: string, args: unknown[], summary: string | undefined, local: boolean): Promise<unknown> {
    this.calls.push({ name, args, ...(summary !== undefined ? { summary } : {}), local });
    const queue = this.queues.get(name);
    if (queue && queue.length > 0) return answerFrom(queue.shift(), args);
    const responder = this.responders.get(name);
    if (responder) return answerFrom(responder, args);
    return Promise.reject(new Error(`no scripted answer for activity ${name} (call ${this.callsOf(name).length})`));
  }
}

// ---------------------------------------------------------------------------------------------
// Activity results and failures
// ---------------------------------------------------------------------------------------------

/** A model reply as the model-call activity returns it. */
export function modelReply(
  content: string | null,
  options: { toolCalls?: ToolCall[]; usage?: TokenUsage | null; finishReason?: string | null; model?: string; estimatedPromptTokens?: number; warnings?: string[] } = {},
): ModelCallResult {
  const message: AssistantMessage = { role: 'assistant', content, ...(options.toolCalls?.length ? { tool_calls: options.toolCalls } : {}) };
  return {
    message,
    usage: options.usage === undefined ? usage(100, 10) : options.usage,
    model: options.model ?? 'fake-model',
    finishReason: options.finishReason === undefined ? (options.toolCalls?.length ? 'tool_calls' : 'stop') : options.finishReason,
    durationMs: 5,
    ...(options.estimatedPromptTokens !== undefined ? { estimatedPromptTokens: options.estimatedPromptTokens } : {}),
    ...(options.warnings ? { warnings: options.warnings } : {}),
  };
}

export function usage(promptTokens: number, completionTokens: number): TokenUsage {
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}

/** Failure details of a model call, as the activity attaches them (`details[0]`). */
export function failureDetails(extra: Partial<ModelFailureDetails> = {}): ModelFailureDetails {
  return { status: 400, providerType: null, providerCode: null, requestId: null, retryAfterMs: null, ...extra };
}

/** An activity that failed with an application failure of `type`, as workflow code receives it. */
export function activityFailure(activityType: string, type: string, message: string, details?: unknown): ActivityFailure {
  const cause = ApplicationFailure.create({ type, message, nonRetryable: true, ...(details !== undefined ? { details: [details] } : {}) });
  return new ActivityFailure('Activity task failed', activityType, '1', RetryState.NON_RETRYABLE_FAILURE, 'unit', cause);
}

/** An activity cancelled with its scope, as workflow code receives it. */
export function activityCancelled(activityType: string): ActivityFailure {
  return new ActivityFailure('Activity cancelled', activityType, '1', RetryState.CANCEL_REQUESTED, 'unit', new CancelledFailure('cancelled'));
}

// ---------------------------------------------------------------------------------------------
// Messages and transcripts
// ---------------------------------------------------------------------------------------------

export const system = (content: string): ChatMessage => ({ role: 'system', content });
export const user = (content: string): ChatMessage => ({ role: 'user', content });
export const assistant = (content: string | null, toolCalls?: ToolCall[]): ChatMessage => ({ role: 'assistant', content, ...(toolCalls?.length ? { tool_calls: toolCalls } : {}) });

export function toolCall(id: string, name: string, args: Record<string, unknown> | string = {}): ToolCall {
  return { id, type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } };
}

export function toolResult(callId: string, result: ToolResult): ToolMessage {
  return { role: 'tool', tool_call_id: callId, content: JSON.stringify(result) };
}

/** A transcript holding `messages`. */
export function transcriptOf(...messages: ChatMessage[]): HashedTranscript {
  return new HashedTranscript(messages);
}

/**
 * `turns` exchanges of a reading session after a system prompt: the user asks, the model calls
 * `read_file`, the result holds `bytes` bytes of text, the model answers. Four messages a turn:
 * turn t (from 1) is messages 1 + 4(t-1) .. 4 + 4(t-1).
 */
export function readingSession(turns: number, bytes: number, prompt = 'You are a careful reader.'): HashedTranscript {
  const transcript = new HashedTranscript([system(prompt)]);
  for (let t = 1; t <= turns; t++) transcript.push(...readingTurn(t, bytes));
  return transcript;
}

/** One turn of `readingSession`. */
export function readingTurn(t: number, bytes: number): ChatMessage[] {
  const id = `call_${t}`;
  const path = `{bundle-root}/file-${t}.md`;
  return [
    user(`turn ${t}: read ${path}`),
    assistant(null, [toolCall(id, 'read_file', { file_path: path })]),
    toolResult(id, { success: true, path, content: 'x'.repeat(bytes) }),
    assistant(`done: turn ${t}`),
  ];
}
