/**
 * The environment variables of the worker, the command line and the servers, for
 * docs/reference/configuration.md. The variables that give session settings their defaults are not
 * here: the settings table declares them (common/settings/session-settings.ts) and the page lists
 * them from it. test/unit/docs/generated-docs.test.ts scans the code for every variable it reads and
 * fails when one is in neither list.
 */

/** One variable: its name (a trailing `*` for a family), its default, and what it does. */
export interface EnvironmentVariable {
  name: string;
  default: string;
  meaning: string;
}

/** Names in the code that look like variables but are constants (a host name, a package, a module path). */
export const NOT_VARIABLES = new Set(['OPENAI_HOST', 'TEMPORAL_CLI_VERSION', 'TEMPORAL_CLI_PACKAGE', 'LOOPWRIGHT_WORKFLOW_INTERCEPTORS']);

/** The variables, in the groups the page shows them in. */
export const ENVIRONMENT: Record<string, readonly EnvironmentVariable[]> = {
  'The model server (read by the worker)': [
    { name: 'OPENAI_API_KEY', default: '—', meaning: 'key for OpenAI (never logged, never in an error message); not needed for a server of your own' },
    {
      name: 'OPENAI_BASE_URL',
      default: 'OpenAI',
      meaning: 'any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio, …), e.g. `http://localhost:11434/v1`; a URL holding credentials is refused',
    },
    { name: 'OPENAI_LOG', default: 'off', meaning: "the `openai` client's own logging (`debug` logs whole replies); Loopwright sends it to the console with the key redacted in every encoding" },
    { name: 'LOOPWRIGHT_MODEL', default: '`gpt-4o-mini`', meaning: 'model, unless a session names one (`--model`); `anthropic:claude-…` or `responses:gpt-…` names its provider too' },
    {
      name: 'LOOPWRIGHT_PROVIDER',
      default: "the base URL's kind",
      meaning:
        "wire format of calls whose model and session name none: `openai` (Chat Completions), `anthropic` (Messages) or `responses` (OpenAI's Responses API, on `OPENAI_BASE_URL` with `OPENAI_API_KEY`); unset, an `OPENAI_BASE_URL` on Anthropic's host means `anthropic`",
    },
    { name: 'ANTHROPIC_API_KEY', default: '—', meaning: "key for Anthropic's Messages API (never logged, never in workflow input or history)" },
    { name: 'ANTHROPIC_BASE_URL', default: 'Anthropic', meaning: 'a Messages server, without `/v1` (a proxy or gateway); a URL holding credentials is refused' },
    { name: 'LOOPWRIGHT_MAX_REPLY_BYTES', default: '1000000', meaning: 'largest reply message the model call returns' },
    { name: 'LOOPWRIGHT_MAX_REPLY_BODY_BYTES', default: '4 × the reply limit', meaning: 'largest HTTP body read from the model server, counted after decompression' },
    { name: 'LOOPWRIGHT_LOG_PAYLOADS', default: 'off', meaning: '`1` logs model request and reply payloads' },
  ],
  'Connecting to Temporal': [
    { name: 'TEMPORAL_PROFILE', default: '`default`', meaning: "the profile of the Temporal CLI's config file to connect with" },
    { name: 'TEMPORAL_CONFIG_FILE', default: '`~/.config/temporalio/temporal.toml`', meaning: "the Temporal CLI's config file" },
    { name: 'TEMPORAL_ADDRESS', default: "the profile's, else the embedded server", meaning: 'an existing server or cluster, `host:port`' },
    { name: 'TEMPORAL_NAMESPACE', default: "the profile's, else `default`", meaning: 'namespace' },
    { name: 'TEMPORAL_API_KEY', default: "the profile's", meaning: 'API key (Temporal Cloud); turns TLS on unless `TEMPORAL_TLS=false`' },
    { name: 'TEMPORAL_TLS', default: "the profile's", meaning: 'TLS on or off' },
    {
      name: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
      default: "the profile's",
      meaning: 'mTLS client certificate; with `TEMPORAL_TLS_CLIENT_KEY_PATH`, `TEMPORAL_TLS_SERVER_CA_CERT_PATH`, `TEMPORAL_TLS_SERVER_NAME` and their `_DATA` forms, as the `temporal` CLI reads them',
    },
    { name: 'TEMPORAL_TLS_CLIENT_KEY_PATH', default: "the profile's", meaning: 'mTLS client key' },
    { name: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', default: "the profile's", meaning: "the server's CA certificate" },
    { name: 'TEMPORAL_TLS_CERT', default: '—', meaning: "Loopwright's older name of `TEMPORAL_TLS_CLIENT_CERT_PATH` (still read; likewise `TEMPORAL_TLS_KEY` and `TEMPORAL_TLS_CA`)" },
    { name: 'TEMPORAL_TLS_KEY', default: '—', meaning: 'older name of `TEMPORAL_TLS_CLIENT_KEY_PATH`' },
    { name: 'TEMPORAL_TLS_CA', default: '—', meaning: 'older name of `TEMPORAL_TLS_SERVER_CA_CERT_PATH`' },
    { name: 'TEMPORAL_GRPC_META_*', default: "the profile's", meaning: 'gRPC headers sent with every call (`TEMPORAL_GRPC_META_X_TENANT` sends `x-tenant`; empty removes a header)' },
    { name: 'TEMPORAL_UI_URL', default: 'the embedded UI', meaning: 'base of Web UI links' },
    { name: 'TEMPORAL_CLI_PATH', default: 'found', meaning: 'a `temporal` binary to use instead of PATH or the tools folder' },
    { name: 'LOOPWRIGHT_CONNECT_TIMEOUT', default: '10 s', meaning: 'how long a command tries to reach the Temporal server before it exits 3 (milliseconds, or a duration such as `3s`)' },
    { name: 'LOOPWRIGHT_STATE_DIR', default: '`.loopwright`, installed `~/.loopwright/state`', meaning: "the embedded server's SQLite file, log and pid file" },
    {
      name: 'LOOPWRIGHT_TOOLS_DIR',
      default: '`.tools`, installed `~/.loopwright/tools`',
      meaning: 'where set-up and `loopwright server install` put the Temporal CLI, and set-up uv (which the worker offers to commands)',
    },
  ],
  Workers: [
    { name: 'LOOPWRIGHT_TASK_QUEUE', default: '`loopwright`', meaning: 'task queue of workers and sessions' },
    { name: 'LOOPWRIGHT_HOST_ID', default: 'the host name', meaning: "this machine's host id: sessions started here record it as their files host, and its workers serve that host's files" },
    {
      name: 'LOOPWRIGHT_STICKY_TIMEOUT',
      default: '10 s',
      meaning: "how long a session's next step waits for the worker that has it cached before any worker takes it (milliseconds, or a duration such as `2s`)",
    },
    { name: 'LOOPWRIGHT_MAX_READ_BYTES', default: '1048576', meaning: 'largest file `read_file` returns' },
    { name: 'LOOPWRIGHT_TOOL_MODULES', default: '—', meaning: 'modules of custom tools, comma-separated (as `--tool-module`; read by `worker` and by the worker `run` and `chat` start themselves)' },
    { name: 'LOOPWRIGHT_SCORER_MODULES', default: '—', meaning: 'modules of eval scorers, comma-separated (as `--scorer-module`; `worker` and `eval` read it)' },
    { name: 'LOOPWRIGHT_ACTIVE_SESSIONS', default: '200', meaning: 'sessions in a turn at once, per worker (`createWorker({ sizing })` too)' },
    { name: 'LOOPWRIGHT_PARALLEL_TOOLS', default: '4', meaning: 'tool calls of one reply run at once' },
    { name: 'LOOPWRIGHT_ACTIVITY_SLOTS', default: 'active sessions × (1 + parallel tools) = 1,000', meaning: 'activity slots of the worker' },
    { name: 'LOOPWRIGHT_WORKFLOW_TASK_SLOTS', default: '40', meaning: 'workflow task slots of the worker' },
    { name: 'LOOPWRIGHT_MAX_CACHED_SESSIONS', default: '1,000, or 250 with tracing on', meaning: 'sessions kept cached by the worker (never 0); the others are replayed when they next get a message' },
    { name: 'LOOPWRIGHT_TRANSCRIPT_CACHE_MB', default: '256', meaning: 'MiB of session transcripts the worker keeps for model calls' },
    { name: 'LOOPWRIGHT_LOG_LEVEL', default: '`INFO` for `worker`, `WARN` otherwise', meaning: 'Temporal runtime log level' },
    {
      name: 'LOOPWRIGHT_DEPLOYMENT',
      default: 'unversioned',
      meaning: '`worker` runs with Worker Deployment Versioning in this deployment (as `--deployment`); `loopwright` when only `LOOPWRIGHT_BUILD_ID` is set',
    },
    {
      name: 'LOOPWRIGHT_BUILD_ID',
      default: '`<package version>-<bundle hash>`',
      meaning: "the versioned worker's build id (as `--build-id`); setting it alone turns versioning on",
    },
  ],
  Observability: [
    { name: 'LOOPWRIGHT_METRICS', default: 'off', meaning: "`host:port` (or a port) of the worker's Prometheus endpoint, `/metrics`" },
    { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', default: 'off', meaning: 'turns traces on: an OTLP/HTTP receiver (Jaeger, Tempo, the OpenTelemetry Collector), e.g. `http://localhost:4318`' },
    { name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', default: 'off', meaning: 'the same, for traces only' },
    { name: 'OTEL_TRACES_EXPORTER', default: 'off', meaning: '`otlp` (default endpoint `http://localhost:4318`), `console` (one JSON line per span on stderr) or `none`' },
    { name: 'OTEL_SERVICE_NAME', default: '`loopwright`', meaning: 'the service the spans belong to' },
    { name: 'OTEL_SDK_DISABLED', default: '`false`', meaning: '`true` turns traces off whatever the other variables say' },
    {
      name: 'OTEL_EXPORTER_OTLP_PROTOCOL',
      default: '—',
      meaning: '`http/protobuf` or `http/json`: spans go over OTLP/HTTP with JSON bodies; `grpc` stops the command with a message naming the variable',
    },
    { name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', default: '—', meaning: 'as `OTEL_EXPORTER_OTLP_PROTOCOL`, for traces' },
    { name: 'OTEL_EXPORTER_OTLP_*', default: '—', meaning: "the exporter's other settings (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, …) work as usual" },
    { name: 'OTEL_BSP_*', default: '—', meaning: "the batch span processor's settings work as usual" },
    { name: 'OTEL_RESOURCE_ATTRIBUTES', default: '—', meaning: 'resource attributes of the spans (`OTEL_TRACES_SAMPLER` works as usual too)' },
  ],
  Encryption: [
    { name: 'LOOPWRIGHT_CODEC_KEY', default: 'off', meaning: 'an AES-256 key in base64 (`openssl rand -base64 32`): every payload is encrypted before it reaches the server' },
    { name: 'LOOPWRIGHT_CODEC_KEY_FILE', default: 'off', meaning: 'a file of keys, one `<id>:<key>` a line, the last one current (for rotation)' },
    { name: 'LOOPWRIGHT_CODEC_KEY_ID', default: 'the last key', meaning: 'the key id new payloads are encrypted with' },
    { name: 'LOOPWRIGHT_CODEC_TOKEN', default: 'off', meaning: '`loopwright codec-server` requires this bearer token' },
    { name: 'LOOPWRIGHT_CODEC_MAX_BODY_BYTES', default: '16 MiB', meaning: 'largest request body the codec server reads' },
  ],
  'The command line and `loopwright serve`': [
    { name: 'LOOPWRIGHT_SERVE_TOKEN', default: '—', meaning: 'the token `loopwright serve` requires (as `--token`); needed to listen on another address than a loopback one' },
    { name: 'LOOPWRIGHT_EXIT_GRACE_MS', default: '3000', meaning: 'how long Ctrl-C waits for a worker in the same process to stop' },
  ],
};
