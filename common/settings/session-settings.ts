/**
 * The settings of a session, declared once: each setting's kind of value, doc text, default and,
 * when the command line has one, its flag (name, parser, environment variable, help).
 *
 * Adding a session setting means adding its entry here and writing the code that uses it; nothing
 * else. From this table follow its type (`SessionInput` and the group types below), the workflow's
 * input check (`sessionInputProblem`, common/session-input-schema.ts), the worker's check of the
 * model settings (activities/model/input-check.ts), its flag on the commands that start sessions
 * with its environment variable and help (cli/setting-flags.ts; a flag joins its group's commands
 * by itself) and how the flag's value becomes the setting (cli/commands/settings-from-options.ts),
 * and its row in docs/configuration.md, which `npx ts-node --transpile-only
 * scripts/gen-settings-doc.ts` writes (a unit test fails while that file is out of date). A new kind
 * of value goes in kinds.ts or session-kinds.ts; a new flag parser or converter in
 * cli/commands/option-values.ts or cli/commands/setting-converters.ts (setting.ts lists their names).
 *
 * The workflow sandbox loads this module once per cached session: plain data and small functions
 * only, no library.
 */
import {
  DEFAULT_BUDGET_WARN_AT,
  DEFAULT_COMPACT_AT,
  DEFAULT_CONTEXT_WINDOW,
  DEFAULT_DELEGATION_MAX_CHILDREN,
  DEFAULT_DELEGATION_MAX_DEPTH,
  DEFAULT_IDLE_TIMEOUT,
  DEFAULT_ITERATION_WARNING,
  DEFAULT_KEEP_RECENT,
  DEFAULT_MAX_CONTINUATIONS,
  DEFAULT_MAX_HISTORY_BYTES,
  DEFAULT_MAX_HISTORY_EVENTS,
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  DEFAULT_MAX_REPEATED_FAILURES,
  DEFAULT_MODEL,
  DEFAULT_MODEL_CALL_TIMEOUT,
  DEFAULT_MODEL_HEARTBEAT_TIMEOUT,
  DEFAULT_SUMMARY_TOKENS,
  DEFAULT_TOOL_HEARTBEAT_TIMEOUT,
  DEFAULT_COMMAND_TIMEOUT,
  DEFAULT_TOOL_TIMEOUT,
  DEFAULT_VERIFY_ATTEMPTS,
} from '../defaults';
import { FILES_WAIT_NOTICE_MS } from '../files-host';
import type { ContinuedSession } from '../continued-types';
import { DIVERGENCE_RULES, UNRECORDED_APPROVALS } from '../eval/eval-script';
import {
  boolean,
  duration,
  fraction,
  jsonObject,
  lineList,
  nonEmptyString,
  numberIn,
  oneOf,
  oneOfOrList,
  orList,
  positiveWholeNumber,
  string,
  stringList,
  stringMap,
  wholeNumber,
  wholeNumberIn,
} from './kinds';
import { agentPatterns, commandPatterns, hostId, mcpServers, partialObject, prices } from './session-kinds';
import { group, type GroupValue, setting } from './setting';
import { PROVIDERS } from '../providers';

/** `reasoning_effort` of reasoning models. */
export const REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;
/** `tool_choice` when tools are offered. */
export const TOOL_CHOICES = ['auto', 'required', 'none'] as const;
/** The request's parameter for the output limit: reasoning models and OpenAI's API take `max_completion_tokens`. */
export const TOKEN_PARAMETERS = ['max_tokens', 'max_completion_tokens'] as const;
/** Which tool calls need a human yes (or a list of tool names). */
export const APPROVAL_POLICIES = ['none', 'writes', 'all'] as const;
/** What happens to a call whose approval timed out. */
export const APPROVAL_ON_TIMEOUT = ['approve', 'deny'] as const;

/** Every setting of a session, in the order the input check reads them. */
export const SESSION_SETTINGS = {
  bundlePath: setting({ kind: nonEmptyString, required: true, doc: 'Bundle folder (or installed BMAD project) as seen by the worker.' }),
  agentId: setting({ kind: string, required: true, doc: 'Agent id, file name or manifest id within the bundle.' }),
  firstMessage: setting({ kind: string, doc: 'A first user message; the session runs a turn for it right away.' }),
  oneShot: setting({
    kind: boolean,
    default: false,
    doc: 'End the session after the first turn (a one-shot run). Requires `firstMessage`.',
    flag: { flags: '--once', help: 'end the session after this turn (a one-shot run)' },
  }),
  maxIterations: setting({
    kind: positiveWholeNumber,
    default: DEFAULT_MAX_ITERATIONS,
    doc: 'Most model calls per turn.',
    flag: { flags: '--max-iterations <n>', help: `most model calls in a turn (default: ${DEFAULT_MAX_ITERATIONS})`, parse: 'positiveInt' },
  }),
  model: setting({
    kind: nonEmptyString,
    defaultText: `the worker's \`LOOPWRIGHT_MODEL\`, else \`${DEFAULT_MODEL}\``,
    doc: 'Model name for this session.',
    flag: { flags: '--model <model>', help: `model for this session (default: LOOPWRIGHT_MODEL, else ${DEFAULT_MODEL})` },
  }),
  outputRoots: setting({
    kind: stringList,
    defaultText: "the bundle's configured output folder",
    doc: "Folders `save_output` may write to. Trusted: the user's own setting.",
    flag: { flags: '--output <dir>', help: "a folder save_output may write to (repeatable; replaces the bundle's output_folder)", parse: 'collect', convert: 'projectPaths', group: 'sandbox' },
  }),
  projectRoot: setting({
    kind: nonEmptyString,
    defaultText: 'the command line records the folder it runs in',
    doc: '`{project-root}` of a stand-alone bundle, absolute: the folder the user works in. An installed BMAD tree keeps the folder that ' + "holds `bmad/`. Trusted: the user's own setting.",
    flag: { flags: '--project-root <dir>', help: 'the {project-root} of a stand-alone bundle (default: this folder)', convert: 'projectRoot', group: 'sandbox' },
  }),
  allowBroadProjectRoot: setting({
    kind: boolean,
    default: false,
    doc: 'Accept `/`, the home folder or a parent of it as the project root.',
    flag: { flags: '--allow-broad-project-root', help: 'accept / or the home folder as the project root', group: 'sandbox' },
  }),
  userSkills: setting({
    kind: boolean,
    default: false,
    doc: "Offer the user's own Agent Skills too (`~/.agents/skills`, `~/.claude/skills`, ...), after the project's.",
    flag: { flags: '--user-skills', help: "also offer your own Agent Skills (~/.agents/skills, ~/.claude/skills, ...), after the project's", group: 'sandbox' },
  }),
  skillFolders: setting({
    kind: stringList,
    doc: "More Agent Skills folders (absolute), after the project's and before the user's.",
    flag: { flags: '--skills-folder <dir>', help: "a folder of Agent Skills to offer besides the project's (repeatable)", parse: 'collect', convert: 'absolutePaths', group: 'sandbox' },
  }),
  allowSecretFiles: setting({
    kind: boolean,
    default: false,
    doc: 'Let tools read and write secret files (credentials, keys, `.env*`, `.git/`...; see docs/concepts/security.md).',
    flag: { flags: '--allow-secret-files', help: 'let tools read and write secret files (.env*, .ssh/, .npmrc, .aws/, keys: see docs/concepts/security.md)', group: 'sandbox' },
  }),
  secretFiles: setting({
    kind: lineList,
    doc:
      "This session's own secret-file rules, one gitignore-style line each, applied after the default list and the project's " +
      '`.loopwright/secret-files`: `*.secret` adds a pattern, `!docs/demo.pem` lets a default through. A line that is not a pattern ' +
      'fails initialisation, naming it.',
    flag: {
      flags: '--secret-files <line>',
      help: "a secret-file rule for this session, in .gitignore syntax: '*.secret' adds one, '!.npmrc' lets a default through (repeatable; after the project's .loopwright/secret-files)",
      parse: 'collect',
      group: 'sandbox',
    },
  }),
  allowHardLinks: setting({
    kind: boolean,
    default: false,
    doc: 'Let tools read files with more than one hard link (a path check cannot see where they point).',
    flag: { flags: '--allow-hard-links', help: 'let tools read files with more than one hard link', group: 'sandbox' },
  }),
  strict: setting({
    kind: boolean,
    default: false,
    doc: 'Fail at initialisation when a file a critical action names is missing (else warn and go on).',
    flag: { flags: '--strict', help: 'fail when a file a critical action names is missing (default: warn)', group: 'sandbox' },
  }),
  idleTimeout: setting({ kind: duration, default: DEFAULT_IDLE_TIMEOUT, doc: 'End the session after this long without a message (a Temporal duration).' }),
  timeouts: setting({
    kind: group(
      {
        modelCall: setting({ kind: duration, default: DEFAULT_MODEL_CALL_TIMEOUT, doc: 'Longest one model call may take, retries aside.' }),
        modelHeartbeat: setting({ kind: duration, default: DEFAULT_MODEL_HEARTBEAT_TIMEOUT, doc: 'A model call whose worker sends no heartbeat for this long is retried elsewhere.' }),
        tool: setting({ kind: duration, default: DEFAULT_TOOL_TIMEOUT, doc: 'Longest one tool call may take.' }),
        toolHeartbeat: setting({
          kind: duration,
          default: DEFAULT_TOOL_HEARTBEAT_TIMEOUT,
          doc: 'A tool call (or the agent initialisation) whose worker sends no heartbeat for this long (both heartbeat while they run) is retried elsewhere.',
        }),
        filesWait: setting({
          kind: duration,
          defaultText: `${FILES_WAIT_NOTICE_MS / 1000} seconds; it then waits on, longer each time`,
          doc: 'How long a file activity waits for a worker of the files host before the session says it waits.',
        }),
      },
      { strict: true },
    ),
    doc: "Activity timeouts (Temporal durations such as '30 seconds'); each has a default suited to a hosted model.",
  }),
  approval: setting({
    kind: group(
      {
        policy: setting({
          kind: oneOfOrList(APPROVAL_POLICIES),
          default: 'none',
          doc: "`none` (the client API's and `run --once`'s default), `writes` (= save_output; chat's default), `all`, or tool names.",
          flag: { flags: '--approve <policy>', help: `tool calls that wait for /approve: ${APPROVAL_POLICIES.join(', ')}, or a comma-separated list of tools`, parse: 'approvalPolicy' },
        }),
        timeout: setting({ kind: duration, defaultText: 'waits for as long as it takes', doc: 'How long a call waits for an answer (a Temporal duration).' }),
        onTimeout: setting({ kind: oneOf(APPROVAL_ON_TIMEOUT), default: 'deny', doc: 'What happens when the timeout passes.' }),
      },
      { strict: true },
    ),
    doc: 'Tool calls that wait for a human yes.',
  }),
  loopBreakers: setting({ kind: boolean, default: true, doc: 'Offer the model `ask_question` and `task_completion`.' }),
  inlineReads: setting({
    kind: boolean,
    default: true,
    doc:
      "Inline reads: the model-call activity runs the reply's built-in read-only tool calls that need no approval right after the reply " +
      'and returns their results with it, so an iteration that only reads is one activity. False: every read runs as its own local ' +
      'activity (one history marker and Web UI entry per read).',
  }),
  tools: setting({
    kind: stringList,
    defaultText: "the agent's `tools:` in bundle.yaml, else every built-in, custom and MCP tool the worker has",
    doc: 'The tools the model is offered, by name or pattern (`*` for any run of characters, e.g. `github__*` for every tool of the MCP server `github`).',
    flag: {
      flags: '--tools <list>',
      help: "the tools the model is offered: names or * patterns, comma-separated, e.g. read_file,github__* (default: the agent's tools: in bundle.yaml, else every tool)",
      parse: 'toolPatternList',
      env: { name: 'LOOPWRIGHT_TOOLS', help: 'default of --tools: tool names or patterns, comma-separated' },
      group: 'tools',
    },
  }),
  mcpServers: setting({
    kind: mcpServers,
    doc: "MCP servers of this session, added to (and winning over) the project's `.mcp.json`.",
    flag: {
      flags: '--mcp-config <file>',
      help: 'MCP servers from a JSON file in .mcp.json format, {"mcpServers": {...}}, added to the project\'s .mcp.json (repeatable; a later file wins per server)',
      parse: 'collect',
      convert: 'mcpConfigFiles',
      group: 'tools',
    },
  }),
  projectMcpConfig: setting({
    kind: boolean,
    default: true,
    doc: "Read the project's `.mcp.json`.",
    flag: { flags: '--no-project-mcp', help: "leave out the MCP servers of the project's .mcp.json", group: 'tools' },
  }),
  allowTools: setting({
    kind: stringList,
    doc: 'MCP tools that run without approval, by name or pattern (`server__*`); read-only ones never wait.',
    flag: {
      flags: '--allow-tool <pattern>',
      help: 'an MCP tool that runs without approval, by name or pattern, e.g. github__get_* (repeatable)',
      parse: 'toolPatterns',
      env: { name: 'LOOPWRIGHT_ALLOW_TOOLS', help: 'default of --allow-tool: tool names or patterns, comma-separated' },
      group: 'tools',
    },
  }),
  searchAttributes: setting({
    kind: boolean,
    internal: true,
    doc: 'Upsert the Loopwright* search attributes (set by the client when the namespace has them registered).',
  }),
  branchFrom: setting({
    kind: group(
      {
        workflowId: setting({ kind: nonEmptyString, required: true, doc: 'The session branched from.' }),
        runId: setting({ kind: nonEmptyString, required: true, doc: 'The run its transcript is read from.' }),
        to: setting({ kind: positiveWholeNumber, required: true, doc: 'End (exclusive) of the transcript taken.' }),
        hash: setting({ kind: nonEmptyString, required: true, doc: 'Hash the transcript taken is checked against.' }),
        turns: setting({ kind: wholeNumber(0), required: true, doc: 'The turns taken.' }),
      },
      { strict: true },
    ),
    internal: true,
    doc: "Start from another session's conversation: its transcript `[0, to)` (the first `turns` turns), read from run `runId` and checked against `hash`. Set by `SessionHandle.branch`.",
  }),
  iterationWarning: setting({ kind: fraction, default: DEFAULT_ITERATION_WARNING, doc: "Tell the model once when this share of the turn's iterations is used (0 turns it off)." }),
  maxRepeatedFailures: setting({ kind: positiveWholeNumber, default: DEFAULT_MAX_REPEATED_FAILURES, doc: 'End a turn `stuck` when the same call fails with the same error this many times.' }),
  continueAsNew: setting({
    kind: group(
      {
        maxHistoryBytes: setting({ kind: positiveWholeNumber, default: DEFAULT_MAX_HISTORY_BYTES, doc: 'History bytes a run may add (Temporal warns at 10 MB and stops a run at 50 MB).' }),
        maxHistoryEvents: setting({ kind: positiveWholeNumber, default: DEFAULT_MAX_HISTORY_EVENTS, doc: 'History events a run may add (Temporal warns at 10,240 and stops at 51,200).' }),
      },
      { strict: true },
    ),
    doc:
      'When a run hands over to a fresh one (continue-as-new): it does once it passes a threshold, at a point where no turn is running ' +
      "or between two iterations of a long turn. The defaults keep well below Temporal's warnings.",
  }),
  modelSettings: setting({
    kind: group(
      {
        provider: setting({
          kind: oneOf(PROVIDERS),
          defaultText: "the model's prefix (`anthropic:claude-…`), else the worker's `LOOPWRIGHT_PROVIDER`, else the kind of its base URL",
          doc:
            'Wire format of the model calls whose model names no provider: `openai` (Chat Completions: OpenAI and every compatible ' +
            "server), `anthropic` (Anthropic's Messages API, with the worker's `ANTHROPIC_API_KEY`) or `responses` (OpenAI's Responses " +
            "API on the worker's OpenAI server and key, reasoning carried between calls). A model string's prefix wins, so a " +
            'fallback model may name another provider (`anthropic:claude-…`, `openai:gpt-…`, `responses:gpt-…`).',
          flag: { flags: '--provider <name>', help: `${orList(PROVIDERS)}: the wire format of model calls (default: the model's prefix, else the worker's)`, group: 'model' },
        }),
        maxOutputTokens: setting({
          kind: positiveWholeNumber,
          default: DEFAULT_MAX_OUTPUT_TOKENS,
          doc: 'Most tokens one reply may have.',
          flag: {
            flags: '--max-output-tokens <n>',
            help: `longest reply, in tokens (default: ${DEFAULT_MAX_OUTPUT_TOKENS})`,
            parse: 'positiveInt',
            env: { name: 'LOOPWRIGHT_MAX_OUTPUT_TOKENS', help: 'default of --max-output-tokens' },
            group: 'model',
          },
        }),
        tokenParameter: setting({
          kind: oneOf(TOKEN_PARAMETERS),
          defaultText: "`max_completion_tokens` to OpenAI's API or with `reasoningEffort`, else `max_tokens`",
          doc: 'How the output limit is sent.',
        }),
        temperature: setting({
          kind: numberIn(0, 2),
          defaultText: "the server's",
          doc: 'Sampling temperature.',
          flag: {
            flags: '--temperature <x>',
            help: "sampling temperature, 0 to 2 (default: the server's)",
            parse: 'temperature',
            env: { name: 'LOOPWRIGHT_TEMPERATURE', help: 'default of --temperature' },
            group: 'model',
          },
        }),
        reasoningEffort: setting({
          kind: oneOf(REASONING_EFFORTS),
          defaultText: 'not sent',
          doc: '`reasoning_effort` of reasoning models.',
          flag: {
            flags: '--reasoning-effort <level>',
            help: `${orList(REASONING_EFFORTS)}, for reasoning models`,
            env: { name: 'LOOPWRIGHT_REASONING_EFFORT', help: 'default of --reasoning-effort' },
            group: 'model',
          },
        }),
        toolChoice: setting({
          kind: oneOf(TOOL_CHOICES),
          default: 'auto',
          doc: '`tool_choice` when tools are offered.',
          flag: { flags: '--tool-choice <choice>', help: `${orList(TOOL_CHOICES)} (default: auto)`, group: 'model' },
        }),
        extraBody: setting({
          kind: jsonObject,
          doc: 'Extra fields merged into the request body, for servers that need them (never overriding model, messages or tools).',
          flag: { flags: '--extra-body <json>', help: 'a JSON object merged into every model request, e.g. \'{"top_k": 40}\'', parse: 'jsonObject', group: 'model' },
        }),
        sendReasoning: setting({
          kind: boolean,
          default: false,
          doc: "Send an earlier reply's `reasoning_content` back to the server (off by default: several servers refuse it).",
          flag: { flags: '--send-reasoning', help: "send earlier replies' reasoning_content back to the model server", group: 'model' },
        }),
        stream: setting({
          kind: boolean,
          defaultText: 'on a terminal (the command line); off otherwise',
          doc:
            'Ask for a streamed reply and show it while it is written (see common/stream-types.ts): the reply is assembled exactly as an ' +
            'unstreamed one. A server that refuses to stream is asked again without.',
          flag: {
            flags: '--stream',
            help: 'ask for streamed replies and show them as they are written (default on a terminal; LOOPWRIGHT_STREAM)',
            negation: 'ask for whole replies, even on a terminal',
            env: { name: 'LOOPWRIGHT_STREAM', help: 'default of --stream / --no-stream: 1 or 0 (unset: stream on a terminal)' },
            group: 'model',
          },
        }),
      },
      { strict: true },
    ),
    doc: 'Sampling and request settings of every model call; recorded in history with each call.',
  }),
  fallbackModels: setting({
    kind: stringList,
    doc: 'Models tried in order when a call keeps failing for a reason a retry on the same model cannot fix (not found, refused access, unprocessable).',
    flag: {
      flags: '--fallback-model <model>',
      help: "a model to try when the session's model cannot answer (repeatable, tried in order)",
      parse: 'models',
      env: { name: 'LOOPWRIGHT_FALLBACK_MODELS', help: 'default of --fallback-model: models, comma-separated' },
      group: 'model',
    },
  }),
  maxContinuations: setting({
    kind: wholeNumber(0),
    default: DEFAULT_MAX_CONTINUATIONS,
    doc: 'How often a reply cut off at the output limit is continued and joined (0: the turn ends `truncated`).',
    flag: {
      flags: '--max-continuations <n>',
      help: `how often a reply cut off at the output limit is continued (default: ${DEFAULT_MAX_CONTINUATIONS}; 0: never)`,
      parse: 'wholeNumber',
      group: 'model',
    },
  }),
  context: setting({
    kind: group(
      {
        window: setting({
          kind: wholeNumber(256),
          defaultText: `what the server reports, else ${DEFAULT_CONTEXT_WINDOW}`,
          doc: "The model's context window in tokens.",
          flag: {
            flags: '--context-window <n>',
            help: `the model's context window in tokens (default: what the server reports, else ${DEFAULT_CONTEXT_WINDOW})`,
            parse: 'positiveInt',
            env: { name: 'LOOPWRIGHT_CONTEXT_WINDOW', help: 'default of --context-window' },
            group: 'model',
          },
        }),
        compactAt: setting({
          kind: numberIn(0, 1, true),
          default: DEFAULT_COMPACT_AT,
          doc: 'Compact once the next prompt would pass this share of the window less the output reserve.',
          flag: { flags: '--compact-at <fraction>', help: `compact the context once a prompt passes this share of the window (default: ${DEFAULT_COMPACT_AT})`, parse: 'openFraction', group: 'model' },
        }),
        keepRecent: setting({
          kind: positiveWholeNumber,
          default: DEFAULT_KEEP_RECENT,
          doc: 'Latest exchanges (model replies with their tool results) that are never pruned or summarised.',
          flag: { flags: '--keep-recent <n>', help: `latest exchanges compaction keeps whole (default: ${DEFAULT_KEEP_RECENT})`, parse: 'positiveInt', group: 'model' },
        }),
        summarize: setting({
          kind: boolean,
          default: true,
          doc: 'Summarise the oldest part with a model call once pruning is not enough.',
          flag: { flags: '--no-summarize', help: 'compact by pruning old tool results only, never with a summarising model call', group: 'model' },
        }),
        summaryTokens: setting({ kind: wholeNumber(16), default: DEFAULT_SUMMARY_TOKENS, doc: 'Longest summary in tokens (at most a tenth of the window).' }),
      },
      { strict: true },
    ),
    doc: "The model's context window and when the model's view of the transcript is compacted.",
  }),
  budget: setting({
    kind: group(
      {
        turnTokens: setting({
          kind: positiveWholeNumber,
          defaultText: 'no limit',
          doc: 'Prompt plus completion tokens one turn may use.',
          flag: {
            flags: '--turn-token-budget <n>',
            help: 'tokens one turn may use (default: no limit)',
            parse: 'positiveInt',
            env: { name: 'LOOPWRIGHT_TURN_TOKEN_BUDGET', help: 'default of --turn-token-budget' },
            group: 'model',
          },
        }),
        sessionTokens: setting({
          kind: positiveWholeNumber,
          defaultText: 'no limit',
          doc: 'Prompt plus completion tokens the whole session may use.',
          flag: {
            flags: '--session-token-budget <n>',
            help: 'tokens the session may use (default: no limit)',
            parse: 'positiveInt',
            env: { name: 'LOOPWRIGHT_SESSION_TOKEN_BUDGET', help: 'default of --session-token-budget' },
            group: 'model',
          },
        }),
        sessionCost: setting({
          kind: numberIn(0, 1e12, true),
          defaultText: 'no limit',
          doc: 'Cost the session may reach, priced by `prices` (which it needs).',
          flag: { flags: '--cost-budget <x>', help: 'cost the session may reach, priced by --price (default: no limit)', parse: 'positiveNumber', group: 'model' },
        }),
        prices: setting({
          kind: prices,
          doc:
            'Price per million input and output tokens by model name (`*` for any other); the cost budget needs the models used to be priced. ' +
            "Prompt tokens the provider read from or wrote to its prompt cache are priced at `cacheRead` and `cacheWrite` (default: a tenth and 1.25 times `input`, Anthropic's).",
          flag: {
            flags: '--price <model=input,output>',
            help: 'price of a model per million input and output tokens, optionally then cached prompt tokens read and written (model=3,15,0.3,3.75; * for any model; repeatable)',
            parse: 'price',
            group: 'model',
          },
        }),
        warnAt: setting({ kind: numberIn(0, 1, true), default: DEFAULT_BUDGET_WARN_AT, doc: 'Share of a budget at which the model and the user are warned.' }),
      },
      { strict: true },
    ),
    doc: 'Token and cost budgets per turn and per session; any left out is unlimited.',
  }),
  filesHost: setting({
    kind: hostId,
    defaultText: 'any worker; `run`, `chat`, `batch` and `schedule create` record this machine',
    doc:
      'The host whose workers hold the bundle and project (see common/files-host.ts): activities that touch files run only there; model ' +
      'calls on any worker. Absent: any worker (one machine, or a shared file system).',
    flag: {
      flags: '--files-host <id>',
      help: "the host whose workers hold the bundle and project: file tools run only there (default: this machine, LOOPWRIGHT_HOST_ID or its host name; 'any': any worker)",
      convert: 'filesHost',
      group: 'sandbox',
    },
  }),
  verify: setting({
    kind: group(
      {
        enabled: setting({
          kind: boolean,
          default: true,
          doc: 'Verify documents that a checklist checks.',
          flag: {
            flags: '--verify',
            help: "check a document a workflow saves against the workflow's checklist, and have the agent fix failed items (default; LOOPWRIGHT_VERIFY)",
            negation: 'do not check saved documents against their checklists',
            env: { name: 'LOOPWRIGHT_VERIFY', help: 'default of --verify / --no-verify: 1 or 0 (unset: verify)' },
            group: 'model',
          },
        }),
        maxAttempts: setting({
          kind: wholeNumberIn(1, 10),
          default: DEFAULT_VERIFY_ATTEMPTS,
          doc: 'Act-and-verify attempts per document before the turn ends failed.',
          flag: {
            flags: '--verify-attempts <n>',
            help: `how often a document is checked (and fixed) before the turn ends failed, 1 to 10 (default: ${DEFAULT_VERIFY_ATTEMPTS})`,
            parse: 'verifyAttempts',
            env: { name: 'LOOPWRIGHT_VERIFY_ATTEMPTS', help: 'default of --verify-attempts' },
            group: 'model',
          },
        }),
      },
      { strict: true },
    ),
    doc: "The verify phase: documents a workflow's checklist checks are verified after they are saved.",
  }),
  commands: setting({
    kind: group(
      {
        enabled: setting({
          kind: boolean,
          default: false,
          doc: 'Offer `run_command`: the model runs shell command lines in the project, in a sandbox (bubblewrap), each after a person approves it unless a rule decides; with it come `list_files` and `search_files` (offered with skills too).',
          flag: { flags: '--commands', help: 'offer run_command: shell commands in a sandbox (bubblewrap), each approved first', group: 'tools' },
        }),
        network: setting({
          kind: boolean,
          default: false,
          doc: 'Let commands reach the network (default: no network at all in the sandbox).',
          flag: { flags: '--command-network', help: 'let sandboxed commands reach the network', group: 'tools' },
        }),
        allowUnsandboxed: setting({
          kind: boolean,
          default: false,
          doc: "The operator's opt-in: where no sandbox can be made (no bubblewrap), run commands directly, with the same environment and limits, instead of refusing them.",
          flag: { flags: '--allow-unsandboxed-commands', help: 'where no sandbox can be made, run commands without one instead of refusing them', group: 'tools' },
        }),
        timeout: setting({ kind: duration, default: DEFAULT_COMMAND_TIMEOUT, doc: 'Longest one command may run; it is then ended with everything it started.' }),
        allow: setting({
          kind: commandPatterns,
          doc:
            'Commands that run without approval, by pattern: words compared with the start of each simple command (`git status` covers ' +
            '`git status -s`), `*` for any run of characters, path variables filled in (`uv run {project-root}/_bmad/scripts/*`). A line ' +
            'runs without approval only when every command of it (between `;`, `&&`, `||`, `|`) is covered and it has no `$( )`, ' +
            'backticks, parentheses or redirection to a file. Deny rules win.',
          flag: {
            flags: '--allow-command <pattern>',
            help: "a command that runs without approval, by prefix and * pattern, e.g. 'git status' or 'uv run {project-root}/_bmad/scripts/*' (repeatable)",
            parse: 'commandPatterns',
            group: 'tools',
          },
        }),
        deny: setting({
          kind: commandPatterns,
          doc: 'Commands refused without asking, by pattern (as `allow`): a line is refused when any command in it is covered, one inside `$( )` too. Deny wins over allow.',
          flag: {
            flags: '--deny-command <pattern>',
            help: "a command refused without asking, by prefix and * pattern, e.g. 'git push' or 'rm' (repeatable; wins over --allow-command)",
            parse: 'commandPatterns',
            group: 'tools',
          },
        }),
        repeatable: setting({
          kind: commandPatterns,
          doc:
            'Commands safe to run again, by pattern (as `allow`): a line every command of which one covers is made again (up to 3 attempts) when its worker is lost mid-run, ' +
            'instead of being reported as one that may or may not have taken effect. It grants nothing: approvals and deny rules apply as before.',
          flag: {
            flags: '--repeatable-command <pattern>',
            help: "a command safe to run again if its worker is lost mid-run, by prefix and * pattern, e.g. 'uv run {project-root}/_bmad/scripts/resolve_config.py' (repeatable)",
            parse: 'commandPatterns',
            group: 'tools',
          },
        }),
      },
      { strict: true },
    ),
    doc:
      "Commands (`run_command`): off unless enabled. A command waits for a person's yes unless a rule allows it (`allow`) or refuses it " +
      "(`deny`; deny wins). A worker's `--allow-command` and `--deny-command` and the bundle's `commands.deny` in bundle.yaml add rules; " +
      "a skill's `allowed-tools` (`Bash(git:*)`) and the bundle's `commands.allow` are requests the approval shows, never grants.",
  }),
  delegation: setting({
    kind: group(
      {
        enabled: setting({
          kind: boolean,
          default: true,
          doc: 'Offer `delegate_task` when the agent has someone to call.',
          flag: { flags: '--no-delegation', help: 'do not offer delegate_task (handing a task to another agent of the bundle as a child session)', group: 'tools' },
        }),
        agents: setting({
          kind: agentPatterns,
          defaultText: "the agent's `delegates:` in bundle.yaml, else every other agent of the bundle",
          doc: 'The agents that may be called, by id or `*` pattern (`bmm/*`). An agent never calls itself.',
          flag: {
            flags: '--delegate-to <list>',
            help: "the agents delegate_task may call: ids or * patterns, comma-separated, e.g. pm,bmm/* (default: the agent's delegates: in bundle.yaml, else every other agent)",
            parse: 'agentPatternList',
            group: 'tools',
          },
        }),
        maxDepth: setting({
          kind: wholeNumberIn(0, 10),
          default: DEFAULT_DELEGATION_MAX_DEPTH,
          doc: 'Deepest chain of delegations (0 refuses every call).',
          flag: { flags: '--delegation-depth <n>', help: `deepest chain of delegations (default: ${DEFAULT_DELEGATION_MAX_DEPTH}; 0 refuses every call)`, parse: 'wholeNumber', group: 'tools' },
        }),
        maxChildren: setting({
          kind: wholeNumberIn(1, 100),
          default: DEFAULT_DELEGATION_MAX_CHILDREN,
          doc: 'Most delegations per turn.',
          flag: { flags: '--delegations-per-turn <n>', help: `most delegations in one turn (default: ${DEFAULT_DELEGATION_MAX_CHILDREN})`, parse: 'positiveInt', group: 'tools' },
        }),
      },
      { strict: true },
    ),
    doc: 'Delegation to other agents of the bundle (`delegate_task`): who may be called, how deep, how many per turn.',
  }),
  delegatedBy: setting({
    kind: group(
      {
        workflowId: setting({ kind: nonEmptyString, required: true, doc: 'The session that delegated.' }),
        callId: setting({ kind: nonEmptyString, required: true, doc: "The parent's `delegate_task` call." }),
        agent: setting({ kind: nonEmptyString, required: true, doc: "The parent's agent id." }),
        depth: setting({ kind: wholeNumberIn(1, 10), required: true, doc: '1 for a child of a top session, 2 for a grandchild, ...' }),
      },
      { strict: true },
    ),
    internal: true,
    doc: 'Set on a child session by the session that delegated to it.',
  }),
  subagent: setting({
    kind: group(
      {
        name: setting({ kind: nonEmptyString, required: true, doc: "What the subagent is called (`run_subagent`'s `name`, else its file's name)." }),
        instructions: setting({ kind: string, doc: 'Its instructions as text.' }),
        instructionsFile: setting({ kind: nonEmptyString, doc: "A file holding its instructions, read with `read_file`'s rules when the child starts." }),
        activeSkillDirs: setting({ kind: stringList, doc: "The starting agent's active skill folders, newest first: a bare `instructionsFile` is looked for there first." }),
      },
      { strict: true },
    ),
    internal: true,
    doc: 'Set on a child session started by `run_subagent`: its agent is made of these instructions instead of an agent of the bundle.',
  }),
  eval: setting({
    kind: group(
      {
        script: setting({ kind: nonEmptyString, required: true, doc: 'The recording the session replays: a file on its files host, written by the eval workflow.' }),
        onDivergence: setting({
          kind: oneOf(DIVERGENCE_RULES),
          default: 'run',
          doc: 'A call that matches no recorded call of its turn: `run` it for real (in the scratch copy), answer it with a `stub`, or answer it with an error (`fail`).',
        }),
        approvals: setting({ kind: oneOf(UNRECORDED_APPROVALS), default: 'approve', doc: 'A call waiting for approval that no recorded decision matches is approved or denied.' }),
        paths: setting({
          kind: stringMap,
          doc: "Folders of the scratch copy and the recorded folders they stand for: a call's arguments are compared with the recording's with each such folder written as recorded.",
        }),
      },
      { strict: true },
    ),
    internal: true,
    doc:
      'Set by the eval workflow (`loopwright eval`): the session sends itself the recorded user messages in order and ends after the last, answers ' +
      'read-only calls that match the recording from it, and decides approvals as recorded.',
  }),
  // Written by the session itself when it continues as new; its transcript is checked by hash on arrival.
  continued: setting({
    kind: partialObject<ContinuedSession>('what the previous run carries over', { fromRunId: nonEmptyString, run: positiveWholeNumber }),
    internal: true,
    doc: 'Set by the session itself when it continues as new: what the next run carries over.',
  }),
};

/** The session's settings group: the input of the session workflow is checked as this (unknown top-level fields pass). */
export const SESSION_INPUT = group(SESSION_SETTINGS, { strict: false });

/** Input of the session workflow. */
export type SessionInput = GroupValue<typeof SESSION_SETTINGS>;

/** Rules between settings, checked after each setting passed its own check: the first problem, as `field: what is wrong`. */
export const SESSION_INPUT_RULES: readonly ((input: SessionInput) => string | undefined)[] = [
  ({ budget }) => (budget?.sessionCost !== undefined && budget.prices === undefined ? 'budget.sessionCost: a cost budget needs budget.prices (the price of each model used, or "*")' : undefined),
  ({ delegatedBy, delegation }) => {
    const maxDepth = delegation?.maxDepth ?? DEFAULT_DELEGATION_MAX_DEPTH;
    return delegatedBy && delegatedBy.depth > maxDepth ? `delegatedBy.depth: ${delegatedBy.depth} is deeper than delegation.maxDepth (${maxDepth})` : undefined;
  },
  ({ subagent, delegatedBy }) => (subagent && !delegatedBy ? 'subagent: only a session started by another (with delegatedBy) runs a subagent' : undefined),
  ({ eval: replay, firstMessage, oneShot }) =>
    replay && (firstMessage !== undefined || oneShot === true) ? 'eval: an eval session takes its messages from its recording (no firstMessage, not oneShot)' : undefined,
  ({ subagent }) => (subagent && subagent.instructionsFile === undefined && (subagent.instructions ?? '').trim() === '' ? 'subagent: give instructions or instructionsFile' : undefined),
];

export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];
export type ToolChoice = (typeof TOOL_CHOICES)[number];
/** The request's parameter for the output limit. */
export type TokenLimitParameter = (typeof TOKEN_PARAMETERS)[number];
/** Which tool calls need a human yes before they run. */
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number] | string[];
/** Approvals of a session. */
export type ApprovalSettings = NonNullable<SessionInput['approval']>;
/** Activity timeouts of a session; each has a default suited to a hosted model. */
export type SessionTimeouts = NonNullable<SessionInput['timeouts']>;
/** Thresholds on what one run adds to its history; a run continues as new once it passes one. */
export type ContinueAsNewSettings = NonNullable<SessionInput['continueAsNew']>;
/** Sampling and request settings of a session's model calls; recorded in history with each call. */
export type ModelSettings = NonNullable<SessionInput['modelSettings']>;
/** The context window and its compaction. */
export type ContextSettings = NonNullable<SessionInput['context']>;
/** Budgets of a session; any left out is unlimited. */
export type BudgetSettings = NonNullable<SessionInput['budget']>;
/** The session's verify setting: on unless `enabled: false`. */
export type VerifySettings = NonNullable<SessionInput['verify']>;
/** Who a session may delegate to, and how far. */
export type DelegationSettings = NonNullable<SessionInput['delegation']>;
/** Set on a child session by its parent: who started it, for which call, and how deep it is. */
export type DelegatedBy = NonNullable<SessionInput['delegatedBy']>;
/** Set on a child session by `run_subagent`: the instructions its agent is made of. */
export type SubagentSpec = NonNullable<SessionInput['subagent']>;
/** Set on an eval session by the eval workflow: the recording it replays and its rules. */
export type EvalSettings = NonNullable<SessionInput['eval']>;
