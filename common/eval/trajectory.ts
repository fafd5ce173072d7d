/**
 * Tool-call trajectories: the calls of a turn in order, each a tool and its arguments, compared
 * with the recording's. Two turns have the same trajectory when they made the same calls (same
 * tool, same arguments as canonical JSON) in the same order; otherwise the first difference is
 * named: another tool, other arguments, a recorded step the candidate skipped, or one it added.
 */
import type { RecordedCall } from './recording';

/** One call of a trajectory as a report shows it. */
export interface TrajectoryStep {
  tool: string;
  /** The arguments as written, cut to 200 characters. */
  arguments: string;
}

/** Where two trajectories first part: at call `index` (0-based) of the turn. */
export interface TrajectoryDifference {
  index: number;
  /** `tool`: another tool; `arguments`: the same tool, other arguments; `missing`: the candidate skipped this recorded call; `extra`: it made one the recording has not. */
  kind: 'tool' | 'arguments' | 'missing' | 'extra';
  baseline?: TrajectoryStep;
  candidate?: TrajectoryStep;
}

type Call = Pick<RecordedCall, 'tool' | 'key' | 'arguments'>;

/** The first difference between a recorded turn's calls and a candidate's, or undefined when they are the same. */
export function compareTrajectory(baseline: readonly Call[], candidate: readonly Call[]): TrajectoryDifference | undefined {
  const same = (a: Call | undefined, b: Call | undefined): boolean => a !== undefined && b !== undefined && a.tool === b.tool && a.key === b.key;
  const length = Math.max(baseline.length, candidate.length);
  for (let index = 0; index < length; index++) {
    const b = baseline[index];
    const c = candidate[index];
    if (same(b, c)) continue;
    const steps = { ...(b ? { baseline: step(b) } : {}), ...(c ? { candidate: step(c) } : {}) };
    if (c === undefined || (b !== undefined && same(baseline[index + 1], c))) return { index, kind: 'missing', ...steps };
    if (b === undefined || same(b, candidate[index + 1])) return { index, kind: 'extra', ...steps };
    return { index, kind: b.tool === c.tool ? 'arguments' : 'tool', ...steps };
  }
  return undefined;
}

function step(call: Call): TrajectoryStep {
  return { tool: call.tool, arguments: call.arguments.length > 200 ? `${call.arguments.slice(0, 200)}…` : call.arguments };
}

/** A difference in a line: `turn 2, call 1: read_file {"file_path":"a"} instead of {"file_path":"b"}`. */
export function differenceText(d: TrajectoryDifference & { turn?: number }): string {
  const where = `${d.turn !== undefined ? `turn ${d.turn}, ` : ''}call ${d.index + 1}`;
  const b = d.baseline;
  const c = d.candidate;
  switch (d.kind) {
    case 'missing':
      return `${where}: skipped ${b!.tool} ${b!.arguments}${c ? ` (went on with ${c.tool})` : ''}`;
    case 'extra':
      return `${where}: added ${c!.tool} ${c!.arguments}`;
    case 'arguments':
      return `${where}: ${c!.tool} ${c!.arguments} instead of ${b!.arguments}`;
    case 'tool':
      return `${where}: ${c!.tool} instead of ${b!.tool}`;
  }
}
