/**
 * The session workflow's input, checked when a run starts: a missing or mistyped field ends the
 * session at once with a `LoopwrightBadInput` failure naming the field, instead of failing somewhere
 * later with a JavaScript error. Hand-written rather than zod: the workflow sandbox gives every
 * session its own instance of each module it imports, and zod's cost about 2 MB per cached session
 * (measured: 10,000 idle sessions took a worker from 1.3 GB to 2.9 GB).
 */
import { DEFAULT_DELEGATION_MAX_DEPTH } from './delegation-types';
import { HOST_ID_PATTERN } from './files-host';
import type { SessionInput } from './session-types';

type Check = (value: unknown, field: string) => string | undefined;

const optional =
  (check: Check): Check =>
  (value, field) =>
    value === undefined ? undefined : check(value, field);

const string =
  (nonEmpty = false): Check =>
  (value, field) => {
    if (typeof value !== 'string') return `${field}: expected a string, got ${describe(value)}`;
    if (nonEmpty && value.trim() === '') return `${field}: must not be empty`;
    return undefined;
  };

const boolean: Check = (value, field) => (typeof value === 'boolean' ? undefined : `${field}: expected true or false, got ${describe(value)}`);

const integer =
  (min: number): Check =>
  (value, field) =>
    typeof value === 'number' && Number.isInteger(value) && value >= min ? undefined : `${field}: expected a whole number >= ${min}, got ${describe(value)}`;

const integerIn =
  (min: number, max: number): Check =>
  (value, field) =>
    typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max
      ? undefined
      : `${field}: expected a whole number from ${min} to ${max}, got ${describe(value)}`;

const hostId: Check = (value, field) =>
  typeof value === 'string' && HOST_ID_PATTERN.test(value) ? undefined : `${field}: expected a host id (letters, digits, '.', '_', '-'; at most 100), got ${describe(value)}`;

const fraction: Check = (value, field) =>
  typeof value === 'number' && value >= 0 && value <= 1 ? undefined : `${field}: expected a number from 0 to 1, got ${describe(value)}`;

/** A Temporal duration: a string such as '30 seconds', or milliseconds. */
const duration: Check = (value, field) =>
  (typeof value === 'string' && value.trim() !== '') || (typeof value === 'number' && value > 0)
    ? undefined
    : `${field}: expected a duration such as '30 seconds', got ${describe(value)}`;

const oneOf =
  (...allowed: string[]): Check =>
  (value, field) =>
    typeof value === 'string' && allowed.includes(value) ? undefined : `${field}: expected one of ${allowed.join(', ')}, got ${describe(value)}`;

/** Lines of a file as a list: strings, empty ones and comments included. */
const lineList: Check = (value, field) => {
  if (!Array.isArray(value)) return `${field}: expected a list of strings, got ${describe(value)}`;
  for (const [i, item] of value.entries()) {
    const problem = string()(item, `${field}.${i}`);
    if (problem) return problem;
  }
  return undefined;
};

const stringList: Check = (value, field) => {
  if (!Array.isArray(value)) return `${field}: expected a list of strings, got ${describe(value)}`;
  for (const [i, item] of value.entries()) {
    const problem = string(true)(item, `${field}.${i}`);
    if (problem) return problem;
  }
  return undefined;
};

/** An object with these fields; `strict` refuses fields it does not know (a typo would be ignored otherwise). */
const object =
  (fields: Record<string, Check>, strict: boolean): Check =>
  (value, field) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return `${field}: expected an object, got ${describe(value)}`;
    const record = value as Record<string, unknown>;
    for (const [name, check] of Object.entries(fields)) {
      const problem = check(record[name], field === '' ? name : `${field}.${name}`);
      if (problem) return problem;
    }
    if (strict) {
      const unknown = Object.keys(record).find((name) => !(name in fields));
      if (unknown !== undefined) return `${field === '' ? unknown : `${field}.${unknown}`}: unknown setting (known: ${Object.keys(fields).join(', ')})`;
    }
    return undefined;
  };

/** A number within [min, max] (`openMin`: above min). */
const numberIn =
  (min: number, max: number, openMin = false): Check =>
  (value, field) =>
    typeof value === 'number' && Number.isFinite(value) && (openMin ? value > min : value >= min) && value <= max
      ? undefined
      : `${field}: expected a number ${openMin ? 'above' : 'from'} ${min} ${openMin ? 'up to' : 'to'} ${max}, got ${describe(value)}`;

/** A JSON object (any fields). */
const plainObject: Check = (value, field) =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? undefined : `${field}: expected an object, got ${describe(value)}`;

/** Prices per model: `{ model: { input, output } }`, per million tokens. */
const prices: Check = (value, field) => {
  const problem = plainObject(value, field);
  if (problem) return problem;
  for (const [model, price] of Object.entries(value as Record<string, unknown>)) {
    const p = object({ input: numberIn(0, 1e9), output: numberIn(0, 1e9) }, true)(price, `${field}.${model}`);
    if (p) return p;
  }
  return undefined;
};

/** A map of strings to strings (an MCP server's `env` or `headers`). */
const stringMap: Check = (value, field) => {
  const problem = plainObject(value, field);
  if (problem) return problem;
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const p = string()(item, `${field}.${key}`);
    if (p) return p;
  }
  return undefined;
};

const MCP_COMMON = { alwaysAllow: optional(stringList), disabled: optional(boolean), timeout: optional(integer(1)) };

/** MCP servers by name: each a command (stdio) or a URL (streamable HTTP), as in `.mcp.json`. */
const mcpServers: Check = (value, field) => {
  const problem = plainObject(value, field);
  if (problem) return problem;
  for (const [name, server] of Object.entries(value as Record<string, unknown>)) {
    const where = `${field}.${name}`;
    if (!/^[A-Za-z0-9_-]{1,40}$/.test(name) || name.includes('__')) return `${where}: a server name takes letters, digits, _ and - (at most 40, no "__")`;
    const p = plainObject(server, where);
    if (p) return p;
    const record = server as Record<string, unknown>;
    const check =
      record.url !== undefined
        ? object({ type: optional(oneOf('http', 'streamable-http')), url: string(true), headers: optional(stringMap), ...MCP_COMMON }, true)
        : object({ type: optional(oneOf('stdio')), command: string(true), args: optional(lineList), env: optional(stringMap), cwd: optional(string(true)), ...MCP_COMMON }, true);
    const q = check(server, where);
    if (q) return q;
  }
  return undefined;
};

/** Agent ids or `*` patterns (`bmm/*`): letters, digits, `_`, `-`, `.`, `/` and `*`. */
const agentPatterns: Check = (value, field) => {
  const problem = stringList(value, field);
  if (problem) return problem;
  const bad = (value as string[]).findIndex((entry) => !/^[A-Za-z0-9_.*/-]{1,200}$/.test(entry));
  return bad < 0 ? undefined : `${field}.${bad}: an agent id or pattern takes letters, digits, _, -, ., / and * (at most 200 characters), got ${describe((value as string[])[bad])}`;
};

const policy: Check = (value, field) => (Array.isArray(value) ? stringList(value, field) : oneOf('none', 'writes', 'all')(value, field));

const SESSION_INPUT = object(
  {
    bundlePath: string(true),
    agentId: string(),
    firstMessage: optional(string()),
    oneShot: optional(boolean),
    maxIterations: optional(integer(1)),
    model: optional(string(true)),
    outputRoots: optional(stringList),
    projectRoot: optional(string(true)),
    allowBroadProjectRoot: optional(boolean),
    userSkills: optional(boolean),
    skillFolders: optional(stringList),
    allowSecretFiles: optional(boolean),
    secretFiles: optional(lineList),
    allowHardLinks: optional(boolean),
    strict: optional(boolean),
    idleTimeout: optional(duration),
    timeouts: optional(object({ modelCall: optional(duration), modelHeartbeat: optional(duration), tool: optional(duration), filesWait: optional(duration) }, true)),
    approval: optional(object({ policy: optional(policy), timeout: optional(duration), onTimeout: optional(oneOf('approve', 'deny')) }, true)),
    loopBreakers: optional(boolean),
    inlineReads: optional(boolean),
    tools: optional(stringList),
    mcpServers: optional(mcpServers),
    projectMcpConfig: optional(boolean),
    allowTools: optional(stringList),
    searchAttributes: optional(boolean),
    branchFrom: optional(object({ workflowId: string(true), runId: string(true), to: integer(1), hash: string(true), turns: integer(0) }, true)),
    iterationWarning: optional(fraction),
    maxRepeatedFailures: optional(integer(1)),
    continueAsNew: optional(object({ maxHistoryBytes: optional(integer(1)), maxHistoryEvents: optional(integer(1)) }, true)),
    modelSettings: optional(
      object(
        {
          maxOutputTokens: optional(integer(1)),
          tokenParameter: optional(oneOf('max_tokens', 'max_completion_tokens')),
          temperature: optional(numberIn(0, 2)),
          reasoningEffort: optional(oneOf('minimal', 'low', 'medium', 'high')),
          toolChoice: optional(oneOf('auto', 'required', 'none')),
          extraBody: optional(plainObject),
          sendReasoning: optional(boolean),
          stream: optional(boolean),
        },
        true,
      ),
    ),
    fallbackModels: optional(stringList),
    maxContinuations: optional(integer(0)),
    context: optional(
      object(
        { window: optional(integer(256)), compactAt: optional(numberIn(0, 1, true)), keepRecent: optional(integer(1)), summarize: optional(boolean), summaryTokens: optional(integer(16)) },
        true,
      ),
    ),
    budget: optional(
      object(
        { turnTokens: optional(integer(1)), sessionTokens: optional(integer(1)), sessionCost: optional(numberIn(0, 1e12, true)), prices: optional(prices), warnAt: optional(numberIn(0, 1, true)) },
        true,
      ),
    ),
    filesHost: optional(hostId),
    verify: optional(object({ enabled: optional(boolean), maxAttempts: optional(integerIn(1, 10)) }, true)),
    delegation: optional(
      object({ enabled: optional(boolean), agents: optional(agentPatterns), maxDepth: optional(integerIn(0, 10)), maxChildren: optional(integerIn(1, 100)) }, true),
    ),
    delegatedBy: optional(object({ workflowId: string(true), callId: string(true), agent: string(true), depth: integerIn(1, 10) }, true)),
    // Written by the session itself when it continues as new; its transcript is checked by hash on arrival.
    continued: optional(object({ fromRunId: string(true), run: integer(1) }, false)),
  },
  false,
);

/** The first problem with `input`, as `field: what is wrong`, or undefined when it is a valid SessionInput. */
export function sessionInputProblem(input: unknown): string | undefined {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return `the session input must be an object, got ${describe(input)}`;
  const problem = SESSION_INPUT(input, '');
  if (problem) return problem;
  const budget = (input as SessionInput).budget;
  if (budget?.sessionCost !== undefined && budget.prices === undefined) return 'budget.sessionCost: a cost budget needs budget.prices (the price of each model used, or "*")';
  const { delegatedBy, delegation } = input as SessionInput;
  if (delegatedBy && delegatedBy.depth > (delegation?.maxDepth ?? DEFAULT_DELEGATION_MAX_DEPTH)) {
    return `delegatedBy.depth: ${delegatedBy.depth} is deeper than delegation.maxDepth (${delegation?.maxDepth ?? DEFAULT_DELEGATION_MAX_DEPTH})`;
  }
  return undefined;
}

/** Type guard over {@link sessionInputProblem}. */
export function isSessionInput(input: unknown): input is SessionInput {
  return sessionInputProblem(input) === undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}
