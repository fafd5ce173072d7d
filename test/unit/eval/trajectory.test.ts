/** Comparing tool-call trajectories and scoring a candidate against its recording, without a server. */
import { compareTrajectory, differenceText } from '../../../common/eval/trajectory';
import { scoreCase } from '../../../common/eval/score-case';
import type { RecordedCall, RecordedTurn, Recording } from '../../../common/eval/recording';
import { argumentsKey } from '../../../common/eval/canonical-json';

function call(tool: string, args: Record<string, unknown> = {}): RecordedCall {
  const text = JSON.stringify(args);
  return { id: `c-${tool}`, tool, arguments: text, key: argumentsKey(text), iteration: 1 };
}
const A = call('read_file', { file_path: 'a.md' });
const B = call('read_file', { file_path: 'b.md' });
const W = call('save_output', { file_path: 'out.md', content: 'x' });

test('trajectory: the same calls in the same order, whatever the order of their argument keys', () => {
  const reordered = { ...W, arguments: '{"content":"x","file_path":"out.md"}', key: argumentsKey('{"content":"x","file_path":"out.md"}') };
  expect(compareTrajectory([A, W], [A, reordered])).toBeUndefined();
  expect(compareTrajectory([], [])).toBeUndefined();
});

test('trajectory: the first difference is named: other arguments, another tool, a skipped step, an added one', () => {
  expect(compareTrajectory([A, W], [B, W])).toMatchObject({ index: 0, kind: 'arguments', baseline: { tool: 'read_file' }, candidate: { arguments: '{"file_path":"b.md"}' } });
  expect(compareTrajectory([A, W], [A, call('edit_file')])).toMatchObject({ index: 1, kind: 'tool' });
  expect(compareTrajectory([A, B, W], [A, W])).toMatchObject({ index: 1, kind: 'missing', baseline: { arguments: '{"file_path":"b.md"}' } });
  expect(compareTrajectory([A, W], [A])).toMatchObject({ index: 1, kind: 'missing', baseline: { tool: 'save_output' } });
  expect(compareTrajectory([A, W], [A, B, W])).toMatchObject({ index: 1, kind: 'extra', candidate: { arguments: '{"file_path":"b.md"}' } });
  expect(compareTrajectory([A], [A, W])).toMatchObject({ index: 1, kind: 'extra' });
  expect(differenceText({ ...compareTrajectory([A, B, W], [A, W])!, turn: 2 })).toBe('turn 2, call 2: skipped read_file {"file_path":"b.md"} (went on with save_output)');
  expect(differenceText(compareTrajectory([A], [B])!)).toBe('call 1: read_file {"file_path":"b.md"} instead of {"file_path":"a.md"}');
});

function turn(n: number, calls: RecordedCall[], status = 'completed', tokens = 100, extra: Partial<RecordedTurn> = {}): RecordedTurn {
  return {
    turn: n,
    message: `message ${n}`,
    calls,
    approvals: [],
    result: { status, success: status === 'completed', iterations: calls.length + 1, usage: { promptTokens: tokens - 10, completionTokens: 10, totalTokens: tokens }, response: 'ok' },
    latencyMs: 50,
    ...extra,
  };
}
function recording(turns: RecordedTurn[], model = 'm'): Recording {
  return { runIds: [], input: { bundlePath: '/b', agentId: 'a', model }, turns, ended: 'completed', warnings: [] };
}

test('score: per turn and per session, side by side; cost from prices; the first trajectory difference with its turn', () => {
  const baseline = recording([turn(1, [A, W]), turn(2, [B])]);
  const replay = { answered: 1, ran: 1, diverged: [{ tool: 'read_file', arguments: '{}', action: 'run' as const }], approvalsAsRecorded: 0, approvalsByRule: 1 };
  const candidate = recording(
    [turn(1, [A, W], 'completed', 150, { result: { ...turn(1, []).result!, usage: { promptTokens: 140, completionTokens: 10, totalTokens: 150 }, replay } }), turn(2, [A], 'max_iterations', 200)],
    'n',
  );
  const scores = scoreCase(baseline, candidate, { m: { input: 1, output: 2 }, '*': { input: 10, output: 20 } });
  expect(scores.baseline).toMatchObject({ status: 'completed', turns: 2, iterations: 5, usage: { totalTokens: 200 }, latencyMs: 100, cost: 0.00022 });
  expect(scores.candidate).toMatchObject({ status: 'max_iterations', turns: 2, usage: { totalTokens: 350 }, cost: 0.0037 });
  expect(scores.statusChanged).toBe(true);
  expect(scores.turns.map((t) => [t.statusChanged, t.trajectory.same])).toEqual([
    [false, true],
    [true, false],
  ]);
  expect(scores.trajectory).toEqual({ same: false, firstDifference: expect.objectContaining({ turn: 2, index: 0, kind: 'arguments' }) });
  expect(scores.replay).toMatchObject({ answered: 1, ran: 1, diverged: 1, divergedCalls: [{ turn: 1, tool: 'read_file', arguments: '{}', action: 'run' }], approvalsByRule: 1 });
  // A candidate that stopped early: the turns it never reached count as changed.
  const short = scoreCase(baseline, recording([turn(1, [A, W])]));
  expect(short.turns[1]!.candidate).toBeUndefined();
  expect(short.turns[1]!.statusChanged).toBe(true);
  expect(short.trajectory.firstDifference).toMatchObject({ turn: 2, kind: 'missing' });
});

test('score: prompt tokens read from or written to the provider cache are priced at the cache prices, as budgets count them', () => {
  const usage = { promptTokens: 1000, completionTokens: 100, totalTokens: 1100, cacheReadTokens: 800, cacheWriteTokens: 100 };
  const cached = recording([turn(1, [A], 'completed', 1100, { result: { ...turn(1, []).result!, usage } })]);
  // Per million: 100 uncached at 10, 800 read at 1 (a tenth), 100 written at 12.5 (1.25×), 100 out at 20.
  expect(scoreCase(cached, cached, { m: { input: 10, output: 20 } }).baseline!.cost).toBe((100 * 10 + 800 * 1 + 100 * 12.5 + 100 * 20) / 1_000_000);
  // A price that names its own cache prices wins.
  expect(scoreCase(cached, cached, { m: { input: 10, output: 20, cacheRead: 2, cacheWrite: 20 } }).baseline!.cost).toBe((100 * 10 + 800 * 2 + 100 * 20 + 100 * 20) / 1_000_000);
});
