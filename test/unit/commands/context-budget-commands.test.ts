/**
 * `compact`, `budget`, `status` and `send` through the command line, against a fake session (no
 * server): what they print for compactions, budgets and the turn statuses that are not plain
 * failures, their --json objects and exit statuses.
 */
import { EXIT } from '../../../cli/exit-codes';
import { cli } from './cli-capture';
import { SessionRejectedError } from '../../../client/session-client';
import type { BudgetState, CompactionRecord, SessionState, TurnResult } from '../../../common/session-types';

const session = {
  workflowId: 's-1',
  workflow: { describe: jest.fn(async () => ({ status: { name: 'RUNNING' } })) },
  send: jest.fn<Promise<TurnResult>, [string]>(),
  compact: jest.fn<Promise<CompactionRecord | null>, []>(),
  budget: jest.fn<Promise<BudgetState>, [unknown]>(),
  state: jest.fn<Promise<SessionState>, []>(),
};

jest.mock('../../../cli/temporal-session', () => ({
  openTemporal: jest.fn(async () => ({ namespace: 'default', taskQueue: 'loopwright', loopwright: { session: () => session }, close: async () => undefined })),
}));
// Every call is answered by the fake session: no worker is looked for or started.
jest.mock('../../../cli/in-process-worker', () => ({
  withWorker: (_temporal: unknown, _options: unknown, fn: () => Promise<unknown>) => fn(),
  hasLongLivedWorker: async () => true,
}));

const RECORD: CompactionRecord = { turn: 3, reason: 'requested', beforeTokens: 96120, afterTokens: 31004, pruned: 14, summarized: 40, summaryCallTokens: 800, durationMs: 900 };
const BUDGET: BudgetState = { turnTokens: { used: 500, limit: 1000 }, sessionTokens: { used: 12000, limit: 50000 }, cost: { used: 0 } };
const STATE: SessionState = {
  status: 'waiting_for_user',
  agent: { id: 'facilitator', name: 'Mary', title: 'Facilitator', commands: [] },
  turn: 3,
  iteration: 2,
  maxIterations: 50,
  runningTools: [],
  pendingApprovals: [],
  usage: { promptTokens: 11000, completionTokens: 1000, totalTokens: 12000 },
  messageCount: 20,
  transcriptBytes: 4000,
  run: 1,
  context: { window: 32768, windowSource: 'server: llama.cpp /props n_ctx', promptTokens: 31004, viewMessages: 9, compactions: 3, lastCompaction: RECORD },
  budget: BUDGET,
};

function turn(fields: Partial<TurnResult>): TurnResult {
  return {
    turn: 3,
    success: true,
    status: 'completed',
    iterations: 2,
    response: 'the reply',
    messageRange: { from: 10, to: 14 },
    toolCalls: 1,
    usage: { promptTokens: 100, completionTokens: 50, totalTokens: 150 },
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
  session.state.mockResolvedValue(STATE);
});

describe('compact', () => {
  test('prints what the compaction did', async () => {
    session.compact.mockResolvedValue(RECORD);
    expect(await cli(['compact', 's-1'])).toEqual({ code: EXIT.OK, stdout: 'context compacted: 96,120 → 31,004 tokens, 14 tool results pruned, 40 messages summarised', stderr: '' });
    expect(session.compact).toHaveBeenCalledTimes(1);
  });

  test('nothing to compact; --json has the record or null', async () => {
    session.compact.mockResolvedValue(null);
    expect((await cli(['compact', 's-1'])).stdout).toBe('nothing to compact');
    expect(JSON.parse((await cli(['compact', 's-1', '--json'])).stdout)).toEqual({ workflowId: 's-1', compaction: null });
    session.compact.mockResolvedValue(RECORD);
    expect(JSON.parse((await cli(['compact', 's-1', '--json'])).stdout)).toEqual({ workflowId: 's-1', compaction: RECORD });
  });

  test('a refusal (a turn is running) is reported, exit 1', async () => {
    session.compact.mockRejectedValue(new SessionRejectedError('a turn is running; compact after it', { type: 'LoopwrightBusy' }));
    const { code, stderr } = await cli(['compact', 's-1']);
    expect(code).toBe(EXIT.FAILED);
    expect(stderr).toBe('Rejected: a turn is running; compact after it');
    const json = await cli(['compact', 's-1', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ error: 'a turn is running; compact after it', type: 'LoopwrightBusy' });
  });
});

describe('budget', () => {
  test('without an option it shows the budgets from the state and raises nothing', async () => {
    const { code, stdout } = await cli(['budget', 's-1']);
    expect(code).toBe(EXIT.OK);
    expect(stdout.split('\n')).toEqual(['Budgets of s-1:', '  turn tokens:    500 / 1,000 (50%)', '  session tokens: 12,000 / 50,000 (24%)', '  cost:           0 (no limit)']);
    expect(session.budget).not.toHaveBeenCalled();
  });

  test('with amounts it raises the budgets by them and shows the result', async () => {
    session.budget.mockResolvedValue({ ...BUDGET, sessionTokens: { used: 12000, limit: 250000 }, cost: { used: 0.2, limit: 3 } });
    const { code, stdout } = await cli(['budget', 's-1', '--session-tokens', '200000', '--cost', '3', '--turn-tokens', '10']);
    expect(code).toBe(EXIT.OK);
    expect(session.budget).toHaveBeenCalledWith({ turnTokens: 10, sessionTokens: 200000, sessionCost: 3 });
    expect(stdout).toContain('Budgets of s-1 (raised):');
    expect(stdout).toContain('session tokens: 12,000 / 250,000 (4%)');
    expect(stdout).toContain('cost:           0.2 / 3 (6%)');
  });

  test('--json is {workflowId, budget}; a session without budgets has null', async () => {
    expect(JSON.parse((await cli(['budget', 's-1', '--json'])).stdout)).toEqual({ workflowId: 's-1', budget: BUDGET });
    const { budget: _b, ...older } = STATE;
    session.state.mockResolvedValue(older);
    expect(JSON.parse((await cli(['budget', 's-1', '--json'])).stdout)).toEqual({ workflowId: 's-1', budget: null });
    expect((await cli(['budget', 's-1'])).stdout).toBe('Session s-1 reports no budgets (it started before budgets existed)');
  });

  test('bad amounts are named; exit 2', async () => {
    const cost = await cli(['budget', 's-1', '--cost', '-1']);
    expect(cost.code).toBe(EXIT.USAGE);
    expect(cost.stderr).toMatch(/^error: option '--cost <x>' argument '-1' is invalid\. Expected a number > 0\./);
    const tokens = await cli(['budget', 's-1', '--session-tokens', 'many']);
    expect(tokens.code).toBe(EXIT.USAGE);
    expect(tokens.stderr).toMatch(/^error: option '--session-tokens <n>' argument 'many' is invalid/);
    expect(session.budget).not.toHaveBeenCalled();
  });
});

describe('status', () => {
  test('shows the context line and the budget lines', async () => {
    const { code, stdout } = await cli(['status', 's-1']);
    expect(code).toBe(EXIT.OK);
    const lines = stdout.split('\n');
    expect(lines).toContain('  context:    31,004 / 32,768 tokens (window from server: llama.cpp /props n_ctx), 3 compactions, last: turn 3, 96,120 → 31,004 tokens (requested)');
    const at = lines.indexOf('  budget:     turn tokens:    500 / 1,000 (50%)');
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 3)).toEqual(['              session tokens: 12,000 / 50,000 (24%)', '              cost:           0 (no limit)']);
  });

  test('a state without them has neither line; --json has them as they are', async () => {
    const { context: _c, budget: _b, ...older } = STATE;
    session.state.mockResolvedValue(older);
    const text = (await cli(['status', 's-1'])).stdout;
    expect(text).toContain('  tokens:     12000');
    expect(text).not.toMatch(/context:|budget:/);
    session.state.mockResolvedValue(STATE);
    const json = JSON.parse((await cli(['status', 's-1', '--json'])).stdout) as { state: SessionState };
    expect(json.state.context).toEqual(STATE.context);
    expect(json.state.budget).toEqual(STATE.budget);
  });
});

describe('send', () => {
  test('a truncated reply: the partial reply on stdout, the plain message on stderr, exit 1', async () => {
    session.send.mockResolvedValue(turn({ success: false, status: 'truncated', response: 'The first half', continuations: 2 }));
    const { code, stdout, stderr } = await cli(['send', 's-1', 'write it all']);
    expect(code).toBe(EXIT.FAILED);
    expect(stdout).toBe('The first half');
    expect(stderr).toContain('(the reply reached the output limit and was continued 2 times)');
    expect(stderr).toContain('The reply was cut off at the output limit (continued 2 times); raise --max-output-tokens or say "continue"');
    expect(stderr).not.toContain('Turn truncated:');
  });

  test.each([
    ['truncated', 'LoopwrightReplyTruncated', /^The reply was cut off/],
    ['content_filtered', 'LoopwrightReplyRefused', /^The model server's content filter/],
    ['refused', 'LoopwrightReplyRefused', /^The model refused/],
    ['budget_exceeded', 'LoopwrightBudgetExceeded', /^A token or cost budget was reached.*loopwright budget s-1 /],
  ] as const)('--json, %s: the failure type and the plain message, exit 1', async (status, type, message) => {
    session.send.mockResolvedValue(turn({ success: false, status, response: 'partial', compactions: [RECORD] }));
    const { code, stdout } = await cli(['send', 's-1', 'go', '--json']);
    expect(code).toBe(EXIT.FAILED);
    const result = JSON.parse(stdout) as Record<string, unknown>;
    expect(result).toMatchObject({ workflowId: 's-1', success: false, status, response: 'partial', type, compactions: [RECORD] });
    expect(result.error).toMatch(message);
  });

  test('a completed turn that compacted the context says so, exit 0', async () => {
    session.send.mockResolvedValue(turn({ compactions: [RECORD] }));
    const { code, stdout, stderr } = await cli(['send', 's-1', 'go']);
    expect(code).toBe(EXIT.OK);
    expect(stdout).toBe('the reply');
    expect(stderr).toContain('(context compacted: 96,120 → 31,004 tokens, 14 tool results pruned, 40 messages summarised)');
  });
});
