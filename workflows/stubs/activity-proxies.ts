/**
 * Activity stubs with their timeouts and retry policies. Each tool is its own activity type so the
 * Web UI shows which one ran; its definition (common/tools/) chooses its retry class and whether it
 * may run as a local activity. Timeouts can be tuned per session (`SessionInput.timeouts`).
 */
import type { CheckPinsInput, CheckPinsResult } from '../../common/pins';
import { type ActivityOptions, type ActivityFunctionWithOptions, type ActivityInterfaceFor, type LocalActivityFunctionWithOptions, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { DEFAULT_MODEL_CALL_TIMEOUT, DEFAULT_MODEL_HEARTBEAT_TIMEOUT, DEFAULT_TOOL_HEARTBEAT_TIMEOUT, DEFAULT_TOOL_TIMEOUT } from '../../common/defaults';
import type { Duration } from '@temporalio/common';
import type { SessionActivities, ToolActivityFunction } from '../../common/activity-types';
import type { ListToolsInput, ListToolsResult, McpCallInput } from '../../common/offered-tools';
import type { ToolResult } from '../../common/messages';
import type { SessionTimeouts } from '../../common/session-types';
import { TOOL_SPECS } from '../../common/tools';
import type { VerifyInput, VerifyResult } from '../../common/verify-types';
import type { EvalTurn, LoadEvalTurnInput } from '../../common/eval/eval-script';
import { type FilesRoute, filesProxy } from './files-route';

/** The stubs a session uses. */
export type SessionActivityStubs = ActivityInterfaceFor<Pick<SessionActivities, 'initializeAgent' | 'callModel' | 'callModelV2' | 'summarizeContext' | 'describeModel' | 'loadTranscriptPage'>> & {
  /** Each tool's activity, by the tool's name. */
  tools: Readonly<Record<string, ActivityFunctionWithOptions<ToolActivityFunction>>>;
  /** The tools made once (`retries: 'once'`), for a call the session's rules mark safe to repeat: made again when its worker is lost. */
  repeatable: Readonly<Record<string, ActivityFunctionWithOptions<ToolActivityFunction>>>;
  /** The read-only tools (`access: 'read'`) as local activities: run in the worker that runs the workflow task, no round trip through the server. */
  localReads: Readonly<Record<string, LocalActivityFunctionWithOptions<ToolActivityFunction>>>;
  /** The activity of a custom tool (registered under the tool's name), by its retry class; `local` for a read run as a local activity. */
  customTool(name: string, retries: 'quick' | 'persistent' | 'once', local: boolean): ActivityFunctionWithOptions<ToolActivityFunction> | LocalActivityFunctionWithOptions<ToolActivityFunction>;
  /** Lists the tools a session offers (built-in, custom, MCP), at start, on continue-as-new and on demand. */
  listTools: ActivityFunctionWithOptions<(input: ListToolsInput) => Promise<ListToolsResult>>;
  /** Calls one tool of an MCP server. */
  callMcpTool: ActivityFunctionWithOptions<(input: McpCallInput) => Promise<ToolResult>>;
  /** The verify phase's model call: checks a saved document against its checklist. */
  verifyDocument: ActivityFunctionWithOptions<(input: VerifyInput) => Promise<VerifyResult>>;
  /** Hashes the session's agent and active skills again at a turn's start (bundle pinning). */
  checkPins: ActivityFunctionWithOptions<(input: CheckPinsInput) => Promise<CheckPinsResult>>;
  /** An eval session's next recorded turn, read from its recording on the files host (null past the last). */
  loadEvalTurn: ActivityFunctionWithOptions<(input: LoadEvalTurnInput) => Promise<EvalTurn | null>>;
};

/**
 * Build the stubs for one session. With `files`, the activities that touch files (initialisation,
 * tools, tool listing, MCP calls, verification) go to the files host's queue and wait for a worker
 * there (files-route.ts); model calls and transcript paging stay on the session's own queue.
 */
export function sessionActivities(timeouts: SessionTimeouts = {}, files?: FilesRoute): SessionActivityStubs {
  const fileActivities: FileProxy = (options) => (files ? filesProxy(options, files) : proxyActivities(options));
  // Reading the bundle is local and quick; a bad bundle is the operator's to fix (the activity
  // marks it non-retryable), so only unexpected errors are retried, briefly.
  const init = fileActivities<Pick<SessionActivities, 'initializeAgent'>>({
    startToCloseTimeout: '1 minute',
    // It heartbeats while it reads: a worker lost meanwhile is noticed within the tools' heartbeat timeout.
    heartbeatTimeout: toolHeartbeatOf(timeouts),
    retry: { maximumAttempts: 3, initialInterval: '1 second' },
  });
  // Model calls can be slow; they heartbeat so that a dead worker is noticed within the heartbeat
  // timeout and so that an interrupt reaches the HTTP request. The activity marks 4xx errors
  // non-retryable and passes Retry-After through `nextRetryDelay`; this policy shapes the rest.
  const model = proxyActivities<Pick<SessionActivities, 'callModel' | 'callModelV2' | 'summarizeContext'>>({
    startToCloseTimeout: (timeouts.modelCall ?? DEFAULT_MODEL_CALL_TIMEOUT) as Duration,
    heartbeatTimeout: (timeouts.modelHeartbeat ?? DEFAULT_MODEL_HEARTBEAT_TIMEOUT) as Duration,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
  });
  // Asking the server for the model's window never fails (unknown is an answer); it is quick, and
  // beats every second: a worker lost meanwhile is noticed within the model heartbeat timeout.
  const describe = proxyActivities<Pick<SessionActivities, 'describeModel'>>({
    startToCloseTimeout: '30 seconds',
    heartbeatTimeout: (timeouts.modelHeartbeat ?? DEFAULT_MODEL_HEARTBEAT_TIMEOUT) as Duration,
    retry: { initialInterval: '1 second', maximumAttempts: 3 },
  });
  // Paging an earlier run's transcript into this one queries that run, which a worker replays.
  const transcript = proxyActivities<Pick<SessionActivities, 'loadTranscriptPage'>>({
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 10 },
  });
  const notRegistered = NOT_REGISTERED;
  // Listing starts MCP servers (a stdio server may first be installed by npx): allow minutes, heartbeat
  // (every second; a worker lost meanwhile is noticed within the tool heartbeat timeout).
  const listing = fileActivities<Pick<SessionActivities, 'listTools'>>({
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: toolHeartbeatOf(timeouts),
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3, ...notRegistered },
  });
  // An MCP call has its own per-call timeout on the worker (the server's `timeout`, default 60 s);
  // the activity's bounds it from outside. A server that cannot be started is retried briefly.
  const mcp = fileActivities<Pick<SessionActivities, 'callMcpTool'>>({
    startToCloseTimeout: (timeouts.tool ?? MCP_CALL_TIMEOUT) as Duration,
    heartbeatTimeout: toolHeartbeatOf(timeouts),
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3, ...notRegistered },
  });
  // Verifying is a model call like the turn's, but an answer that is not the asked-for JSON is
  // retried only a few times: after that the turn ends "not verified" instead of waiting on.
  const verify = fileActivities<{ verifyDocument(input: VerifyInput): Promise<VerifyResult> }>({
    startToCloseTimeout: (timeouts.modelCall ?? DEFAULT_MODEL_CALL_TIMEOUT) as Duration,
    heartbeatTimeout: (timeouts.modelHeartbeat ?? DEFAULT_MODEL_HEARTBEAT_TIMEOUT) as Duration,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5, ...notRegistered },
  });
  // A few small reads on the files host: quick, and a failure only skips the check (see pins.ts).
  const pins = fileActivities<Pick<SessionActivities, 'checkPins'>>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '500 milliseconds', maximumAttempts: 2, ...notRegistered },
  });
  // An eval session's recording is a file on the files host, written before the session started: a quick read, retried soon after a lost worker.
  const script = fileActivities<{ loadEvalTurn(input: LoadEvalTurnInput): Promise<EvalTurn | null> }>({
    startToCloseTimeout: '15 seconds',
    retry: { initialInterval: '1 second', maximumAttempts: 5, ...notRegistered },
  });
  // proxyActivities returns a Proxy with no own keys, so pick the stubs by name (a spread would copy nothing).
  return {
    initializeAgent: init.initializeAgent,
    callModel: model.callModel,
    callModelV2: model.callModelV2,
    summarizeContext: model.summarizeContext,
    describeModel: describe.describeModel,
    loadTranscriptPage: transcript.loadTranscriptPage,
    ...toolStubs(timeouts, fileActivities),
    listTools: listing.listTools,
    callMcpTool: mcp.callMcpTool,
    verifyDocument: verify.verifyDocument,
    checkPins: pins.checkPins,
    loadEvalTurn: script.loadEvalTurn,
  };
}

/** A proxy of activities that touch files (on the files host's queue when the session names one). */
type FileProxy = <A extends object>(options: ActivityOptions) => ActivityInterfaceFor<A>;

/**
 * A custom tool is an activity named like the tool; a worker without it answers NotFoundError,
 * which no retry on the same task queue would cure soon, so the call fails at once with a result
 * that says so (see tool-calls.ts).
 */
/** An MCP call's bound when the session sets no tool timeout: the server's own per-call timeout (default 60 s) acts first. */
const MCP_CALL_TIMEOUT = '10 minutes';

/** The outer bound of a call that is never made again; the tool itself ends it sooner (a command's own timeout). */
const ONCE_TOOL_BOUND = '1 hour';

const NOT_REGISTERED = { nonRetryableErrorTypes: ['NotFoundError'] };

/** The built-in tools' stubs (normal and local), and the custom tools' by retry class. */
function toolStubs(timeouts: SessionTimeouts, fileActivities: FileProxy): Pick<SessionActivityStubs, 'tools' | 'repeatable' | 'localReads' | 'customTool'> {
  const toolHeartbeat = toolHeartbeatOf(timeouts);
  const notRegistered = NOT_REGISTERED;
  // Tools report expected failures as results; retries are for unexpected ones (I/O errors, a
  // lost worker). Reads are cheap to repeat but pointless to repeat often.
  const quick = fileActivities<Record<string, ToolActivityFunction>>({
    startToCloseTimeout: (timeouts.tool ?? DEFAULT_TOOL_TIMEOUT) as Duration,
    heartbeatTimeout: toolHeartbeat,
    retry: { initialInterval: '500 milliseconds', maximumAttempts: 3 },
  });
  // Reads are quick, idempotent and side-effect free, so they may run inside the workflow task as
  // local activities: a crash repeats a read, which is harmless, and an interrupt cancels them
  // locally. Model calls and writes stay normal activities (a local model call would be repeated
  // after a crash and could not be interrupted quickly).
  const localQuick = proxyLocalActivities<Record<string, ToolActivityFunction>>({
    startToCloseTimeout: (timeouts.tool ?? DEFAULT_TOOL_TIMEOUT) as Duration,
    retry: { initialInterval: '500 milliseconds', maximumAttempts: 3 },
  });
  // Tools whose result must not be lost (a finished document) are retried longer.
  const persistent = fileActivities<Record<string, ToolActivityFunction>>({
    startToCloseTimeout: (timeouts.tool ?? DEFAULT_TOOL_TIMEOUT) as Duration,
    heartbeatTimeout: toolHeartbeat,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 8 },
  });
  // Tools whose call must not be made twice (a command): no retry. The tool bounds its own run (a
  // command's timeout); the heartbeat notices a lost worker, and the call then fails saying it may
  // or may not have taken effect (tool-calls.ts).
  const once = fileActivities<Record<string, ToolActivityFunction>>({
    startToCloseTimeout: ONCE_TOOL_BOUND,
    heartbeatTimeout: toolHeartbeat,
    retry: { maximumAttempts: 1 },
  });
  const customQuick = fileActivities<Record<string, ToolActivityFunction>>({
    startToCloseTimeout: (timeouts.tool ?? DEFAULT_TOOL_TIMEOUT) as Duration,
    heartbeatTimeout: toolHeartbeat,
    retry: { initialInterval: '500 milliseconds', maximumAttempts: 3, ...notRegistered },
  });
  const customLocal = proxyLocalActivities<Record<string, ToolActivityFunction>>({
    startToCloseTimeout: (timeouts.tool ?? DEFAULT_TOOL_TIMEOUT) as Duration,
    retry: { initialInterval: '500 milliseconds', maximumAttempts: 3, ...notRegistered },
  });
  const customPersistent = fileActivities<Record<string, ToolActivityFunction>>({
    startToCloseTimeout: (timeouts.tool ?? DEFAULT_TOOL_TIMEOUT) as Duration,
    heartbeatTimeout: toolHeartbeat,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 8, ...notRegistered },
  });
  // A call of such a tool that the session's rules mark safe to repeat (commands.repeatable): the
  // same bound and heartbeat, and a few attempts.
  const repeatable = fileActivities<Record<string, ToolActivityFunction>>({
    startToCloseTimeout: ONCE_TOOL_BOUND,
    heartbeatTimeout: toolHeartbeat,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
  });
  const byClass = { quick, persistent, once };
  const customByClass = { quick: customQuick, persistent: customPersistent, once };
  return {
    tools: Object.fromEntries(TOOL_SPECS.map((spec: { name: string; retries: keyof typeof byClass }) => [spec.name, byClass[spec.retries][spec.name]!])),
    repeatable: Object.fromEntries(TOOL_SPECS.filter((spec: { retries: string }) => spec.retries === 'once').map((spec) => [spec.name, repeatable[spec.name]!])),
    localReads: Object.fromEntries(TOOL_SPECS.filter((spec) => spec.access === 'read').map((spec) => [spec.name, localQuick[spec.name]!])),
    customTool: (name, retries, local) => (local ? customLocal[name]! : customByClass[retries][name]!),
  };
}

/** Tools heartbeat, so an interrupt reaches one that is stuck (a blocking read), and a lost worker is noticed, within seconds. */
function toolHeartbeatOf(timeouts: SessionTimeouts): Duration {
  return (timeouts.toolHeartbeat ?? DEFAULT_TOOL_HEARTBEAT_TIMEOUT) as Duration;
}
