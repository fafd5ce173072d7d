/**
 * `loopwright tools <id>` through the command line, against a fake session (no server): one line per
 * offered tool from the session's state (name, kind, read or write, needs approval, the MCP server),
 * its --json object, and a session that has not listed its tools.
 */
import { EXIT } from '../../../cli/exit-codes';
import { cli } from './cli-capture';
import type { OfferedToolSummary, SessionState } from '../../../common/session-types';

const session = {
  workflowId: 's-1',
  workflow: { describe: jest.fn(async () => ({ status: { name: 'RUNNING' } })) },
  state: jest.fn<Promise<SessionState>, []>(),
};
const workerOptions: unknown[] = [];

jest.mock('../../../cli/temporal-session', () => ({
  openTemporal: jest.fn(async () => ({ namespace: 'default', taskQueue: 'loopwright', loopwright: { session: () => session }, close: async () => undefined })),
}));
// Every query is answered by the fake session: no worker is looked for or started.
jest.mock('../../../cli/in-process-worker', () => ({
  withWorker: (_temporal: unknown, options: unknown, fn: () => Promise<unknown>) => {
    workerOptions.push(options);
    return fn();
  },
  hasLongLivedWorker: async () => true,
}));

const TOOLS: OfferedToolSummary[] = [
  { name: 'read_file', kind: 'builtin', access: 'read' },
  { name: 'save_output', kind: 'builtin', access: 'write' },
  { name: 'lint_docs', kind: 'custom', access: 'read' },
  { name: 'github__create_issue', kind: 'mcp', access: 'write', approval: 'required', server: 'github' },
  { name: 'github__get_issue', kind: 'mcp', access: 'read', server: 'github' },
];

function state(fields: Partial<SessionState> = {}): SessionState {
  return {
    status: 'waiting_for_user',
    agent: { id: 'facilitator', name: 'Mary', title: 'Facilitator', commands: [] },
    turn: 1,
    iteration: 0,
    maxIterations: 50,
    runningTools: [],
    pendingApprovals: [],
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    messageCount: 3,
    transcriptBytes: 900,
    run: 1,
    ...fields,
  };
}

const savedOtel: Record<string, string | undefined> = {};
beforeAll(() => {
  for (const name of Object.keys(process.env).filter((n) => n.startsWith('OTEL_'))) {
    savedOtel[name] = process.env[name];
    delete process.env[name];
  }
});
afterAll(() => Object.assign(process.env, savedOtel));
beforeEach(() => {
  jest.clearAllMocks();
  workerOptions.length = 0;
});

test('one line per tool: name, kind, read or write, needs approval, the MCP server', async () => {
  session.state.mockResolvedValue(state({ tools: TOOLS }));
  const { code, stdout, stderr } = await cli(['tools', 's-1']);
  expect(code).toBe(EXIT.OK);
  expect(stderr).toBe('');
  expect(stdout.split('\n')).toEqual([
    'Session s-1 offers 5 tool(s):',
    '  read_file             builtin  read',
    '  save_output           builtin  write',
    '  lint_docs             custom   read',
    '  github__create_issue  mcp      write  needs approval  (server github)',
    '  github__get_issue     mcp      read   (server github)',
  ]);
  expect(session.state).toHaveBeenCalledTimes(1);
  // Asked through a worker of its own when none answers, as status does.
  expect(workerOptions).toEqual([expect.objectContaining({ startIfSlow: true })]);
});

test('--json: {workflowId, tools} as the state has them', async () => {
  session.state.mockResolvedValue(state({ tools: TOOLS }));
  const { code, stdout } = await cli(['tools', 's-1', '--json']);
  expect(code).toBe(EXIT.OK);
  expect(JSON.parse(stdout)).toEqual({ workflowId: 's-1', tools: TOOLS });
});

test('a session that offers no tool says so', async () => {
  session.state.mockResolvedValue(state({ tools: [] }));
  expect(await cli(['tools', 's-1'])).toEqual({ code: EXIT.OK, stdout: 'Session s-1 offers 0 tool(s).', stderr: '' });
});

test('a session without a tool list: said in words; --json has tools null', async () => {
  session.state.mockResolvedValue(state());
  const old = await cli(['tools', 's-1']);
  expect(old.code).toBe(EXIT.OK);
  expect(old.stdout).toBe('Session s-1 has not listed its tools: it was started by a version of loopwright that did not list them, and offers the built-in tools.');
  session.state.mockResolvedValue(state({ agent: undefined, status: 'initializing' }));
  expect((await cli(['tools', 's-1'])).stdout).toBe('Session s-1 has not listed its tools: it is still starting.');
  expect(JSON.parse((await cli(['tools', 's-1', '--json'])).stdout)).toEqual({ workflowId: 's-1', tools: null });
});

test('a failing query is reported as every command reports a failure: --json {error, type}, exit 1', async () => {
  session.state.mockRejectedValue(new Error('query failed: no such workflow'));
  const text = await cli(['tools', 's-1']);
  expect(text.code).toBe(EXIT.FAILED);
  expect(text.stderr).toContain('query failed: no such workflow');
  const json = await cli(['tools', 's-1', '--json']);
  expect(json.code).toBe(EXIT.FAILED);
  expect(JSON.parse(json.stdout)).toMatchObject({ error: expect.stringContaining('query failed: no such workflow') });
});

test('`tools --help` names the command, an example and the variables it reads; a missing id is a usage mistake', async () => {
  const help = await cli(['tools', '--help']);
  expect(help.stdout).toMatch(/^Usage: loopwright tools \[options\] <id>/);
  expect(help.stdout).toContain('loopwright tools loopwright-facilitator-1a2b3c4d');
  expect(help.stdout).toContain('TEMPORAL_ADDRESS');
  const missing = await cli(['tools']);
  expect(missing.code).toBe(EXIT.USAGE);
  expect(missing.stderr).toMatch(/^error: missing required argument 'id'/);
});
