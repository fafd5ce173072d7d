/**
 * A turn's limits (workflows/turn/turn-limits.ts) without a server: the iteration limit (the
 * session's, raised by `extend` for the running turn only), the reply at the limit (a session a
 * human talks to is told how to go on), the warning the model gets once when the limit is near,
 * repeated failures counted per turn, and what a turn handed to the next run carries. Sessions
 * recorded before these rules keep a fixed limit, no warning and no failure count.
 */
import { maxIterationsMessage, TurnLimits, type LimitRules } from '../../../workflows/turn/turn-limits';
import type { PendingTurn } from '../../../common/session-types';
import { toolCall, transcriptOf, user } from '../../support/workflow-fakes';

const RULES: LimitRules = { warnAt: 0.8, maxRepeatedFailures: 3, interactive: true, loopBreakers: true };

/** Limits of a session (`rules` null: a session recorded before them). */
function limits(sessionMax: number, rules: LimitRules | null = RULES, pending?: PendingTurn) {
  const changes: number[] = [];
  const l = new TurnLimits(sessionMax, rules ?? undefined, pending, (limit) => void changes.push(limit));
  return { l, changes };
}

const ENOENT = { success: false, error: 'ENOENT' };
const read = toolCall('r', 'read_file', { file_path: 'missing.md' });

describe('TurnLimits', () => {
  test("turn limits: the limit is reached at the session's iterations; extend raises it for the running turn only", () => {
    const { l, changes } = limits(4);
    l.beginTurn();
    expect(l.reached(3)).toBe(false);
    expect(l.reached(4)).toBe(true);
    expect(l.extend(10)).toBe(14);
    expect(l.reached(13)).toBe(false);
    // No amount: the session's limit again.
    expect(l.extend(null)).toBe(18);
    expect(l.extend()).toBe(22);
    l.beginTurn();
    expect(l.limit).toBe(4);
    expect(changes).toEqual([4, 14, 18, 22, 4]);
  });

  test('turn limits: at the limit an interactive session says how to go on; otherwise the partial reply and the error', () => {
    expect(maxIterationsMessage(5)).toBe('Agent execution exceeded maximum iterations (5)');
    expect(limits(5).l.limitReply('Read three files.')).toEqual({
      response: 'I reached this turn\'s limit of 5 iterations before finishing. So far: Read three files. Say "continue" to let me go on (or extend the limit).',
      error: 'Agent execution exceeded maximum iterations (5)',
    });
    expect(limits(5).l.limitReply(null).response).toBe('I reached this turn\'s limit of 5 iterations before finishing. Say "continue" to let me go on (or extend the limit).');
    expect(limits(5, { ...RULES, interactive: false }).l.limitReply('partial')).toEqual({ response: 'partial', error: 'Agent execution exceeded maximum iterations (5)' });
  });

  test('turn limits: the model is told once per turn when warnAt of the limit is used, pointed at the question tool', () => {
    const { l } = limits(5);
    l.beginTurn();
    expect(l.warning(0)).toBeUndefined();
    expect(l.warning(3)).toBeUndefined();
    expect(l.warning(4)).toBe("[Loopwright] 4 of this turn's 5 iterations are used; 1 remain. Finish the task now, or ask the user how to go on (ask_question).");
    expect(l.warning(4)).toBeUndefined();
    l.beginTurn();
    expect(l.warning(4)).toMatch(/^\[Loopwright\] 4 of this turn's 5 iterations are used/);
    const plain = limits(10, { ...RULES, loopBreakers: false }).l;
    expect(plain.warning(8)).toBe("[Loopwright] 8 of this turn's 10 iterations are used; 2 remain. Finish the task now, or ask the user how to go on.");
    expect(limits(10, { ...RULES, warnAt: 0 }).l.warning(9)).toBeUndefined();
  });

  test('turn limits: repeated failures count within a turn and end it stuck at maxRepeatedFailures', () => {
    const { l } = limits(50);
    const transcript = transcriptOf(user('read'));
    l.beginTurn();
    expect(l.noteFailures(transcript, [read], [ENOENT])).toBeUndefined();
    expect(l.noteFailures(transcript, [read], [ENOENT])).toBeUndefined();
    expect(l.noteFailures(transcript, [read], [ENOENT])).toMatch(/^The same call kept failing \(3 times\): read_file/);
    // A new turn counts afresh.
    l.beginTurn();
    expect(l.noteFailures(transcript, [read], [ENOENT])).toBeUndefined();
  });

  test('turn limits: a turn handed to the next run carries its raised limit, its warning and its failures', () => {
    const { l } = limits(5);
    l.beginTurn();
    l.extend(5);
    l.warning(8);
    l.noteFailures(transcriptOf(), [read], [ENOENT]);
    const carried = l.carry();
    expect(carried).toEqual({ warned: true, failures: { [`read_file\u0000${read.function.arguments}\u0000ENOENT`]: 1 }, maxIterations: 10 });
    const pending = { turn: 1, firstIndex: 1, iterations: 8, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, startedAt: 0, ...carried } as PendingTurn;
    const next = limits(5, RULES, pending);
    expect(next.l.limit).toBe(10);
    next.l.resume(pending);
    expect(next.changes).toEqual([10]);
    expect(next.l.warning(9)).toBeUndefined();
    expect(next.l.noteFailures(transcriptOf(), [read], [ENOENT])).toBeUndefined();
    expect(next.l.noteFailures(transcriptOf(), [read], [ENOENT])).toMatch(/kept failing \(3 times\)/);
    // Not extended: no limit to carry.
    expect(limits(5).l.carry()).toEqual({ warned: false, failures: {} });
  });

  test('turn limits: a session recorded before the rules keeps its fixed limit, never warns and counts no failures', () => {
    const { l } = limits(3, null);
    l.beginTurn();
    l.extend(10);
    expect(l.limit).toBe(3);
    expect(l.reached(3)).toBe(true);
    expect(l.warning(2)).toBeUndefined();
    for (let i = 0; i < 5; i++) expect(l.noteFailures(transcriptOf(), [read], [ENOENT])).toBeUndefined();
    expect(l.limitReply('p')).toEqual({ response: 'p', error: 'Agent execution exceeded maximum iterations (3)' });
    expect(l.carry()).toEqual({ warned: false, failures: {} });
  });
});
