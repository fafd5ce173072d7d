/**
 * The eval page's view of a case (common/eval/eval-view.ts), on recordings made by hand and scored
 * by scoreCase as the eval does: a step the candidate added, a diverged call whose arguments the
 * report cut (matched to its call all the same), the candidate's scratch paths written as
 * recorded, a turn it never reached, a side that cannot be read, and small token changes not marked.
 */
import { argumentsKey } from '../../../common/eval/canonical-json';
import type { EvalCaseReport } from '../../../common/eval/eval-types';
import { evalCaseView } from '../../../common/eval/eval-view';
import type { RecordedCall, RecordedTurn, Recording } from '../../../common/eval/recording';
import { scoreCase } from '../../../common/eval/score-case';

const PROJECT = '/home/me/project';
const SCRATCH = '/tmp/eval/00000/workspace';

function call(tool: string, args: Record<string, unknown>, iteration = 1): RecordedCall {
  const text = JSON.stringify(args);
  return { id: `${tool}-${iteration}-${text.length}`, tool, arguments: text, key: argumentsKey(text.split(SCRATCH).join(PROJECT)), iteration };
}

function turn(n: number, message: string, calls: RecordedCall[], tokens: number, extra: Partial<RecordedTurn['result']> = {}): RecordedTurn {
  const usage = { promptTokens: tokens, completionTokens: 0, totalTokens: tokens };
  return { turn: n, message, calls, approvals: [], result: { status: 'completed', success: true, iterations: 2, usage, response: `answer ${n}`, ...extra } };
}

function recording(turns: RecordedTurn[], paths?: Record<string, string>): Recording {
  return { runIds: [], input: { bundlePath: PROJECT, agentId: 'a', ...(paths ? { eval: { script: 'x', paths } } : {}) } as Recording['input'], turns, ended: 'completed', warnings: [] };
}

test('eval view: an added step, a diverged call with cut arguments, scratch paths as recorded, a turn not reached', () => {
  const long = 'x'.repeat(300);
  const baseline = recording([turn(1, 'go', [call('read_file', { file_path: `${PROJECT}/a.md` })], 1000), turn(2, 'again', [], 1000)]);
  const candidate = recording(
    [
      turn(1, 'go', [call('read_file', { file_path: `${SCRATCH}/a.md` }), call('save_output', { file_path: `${SCRATCH}/b.md`, content: long }, 2)], 1050, {
        replay: {
          answered: 1,
          ran: 0,
          diverged: [{ tool: 'save_output', arguments: `${JSON.stringify({ file_path: `${SCRATCH}/b.md`, content: long }).slice(0, 200)}…`, action: 'run' }],
          approvalsAsRecorded: 0,
          approvalsByRule: 0,
        },
      }),
    ],
    { [SCRATCH]: PROJECT },
  );
  const report: EvalCaseReport = { index: 0, name: 'r', source: { workflowId: 'r' }, candidateWorkflowId: 'e-0', scorers: [], ...scoreCase(baseline, candidate) };
  const view = evalCaseView('e', report, baseline, candidate, ['nothing missing, but listed']);
  const [one, two] = view.turns;
  // 5% more tokens is not marked; the added save is, at its index, and it is the diverged call.
  expect(one!.differences.map((d) => [d.kind, d.index])).toEqual([
    ['extra', 1],
    ['diverged', 1],
  ]);
  expect(one!.differences[1]!.text).toMatch(new RegExp(`^save_output \\{"file_path":"${PROJECT}/b.md".*…: ran in the scratch copy$`));
  const calls = one!.transcripts.candidate!.calls;
  expect(calls.map((c) => [c.tool, c.diverged])).toEqual([
    ['read_file', undefined],
    ['save_output', 'run'],
  ]);
  expect(calls[0]!.arguments).toBe(JSON.stringify({ file_path: `${PROJECT}/a.md` }));
  expect(one!.transcripts.baseline!.calls[0]).toMatchObject({ index: 0, tool: 'read_file', iteration: 1 });
  // The candidate never sent the second message.
  expect(two!.differences).toEqual([{ kind: 'not-reached', text: 'the candidate never reached this turn' }]);
  expect(two!.transcripts).toEqual({ baseline: expect.objectContaining({ message: 'again', response: 'answer 2' }) });
  // A side that could not be read is left out, and the problem named.
  const unread = evalCaseView('e', report, undefined, candidate, ['the recording (r) cannot be read: gone']);
  expect(unread.turns[0]!.transcripts.baseline).toBeUndefined();
  expect(unread.problems).toEqual(['the recording (r) cannot be read: gone']);
  expect(unread.turns[0]!.differences).toEqual(one!.differences);
});
