/**
 * Custom scorers: TypeScript functions a worker registers (like custom tools), run by the eval's
 * scoring activity on every case. A scorer gets the recording, the candidate's replay of it, the
 * built-in scores and the candidate's scratch copy (to check the files it left), and answers with a
 * number (a score), a boolean (passed) or both with a note. A scorer that throws is reported as
 * such; it never stops the eval.
 */
import type { CaseScores } from '../../common/eval/score-case';
import type { ScorerOutcome } from '../../common/eval/eval-types';
import type { Recording } from '../../common/eval/recording';

/** What a scorer is given for one case. */
export interface ScorerInput {
  /** The case's name (a workflow id, or a file's name). */
  name: string;
  baseline: Recording;
  candidate: Recording;
  /** The built-in scores: figures side by side per turn and per session, trajectory, replay counts. */
  scores: CaseScores;
  /** The candidate's scratch copy of the project, while it is kept (until the case is scored). */
  workspace?: string;
}

/** A scorer's verdict: a score, passed or not, or both with a note. */
export type ScorerVerdict = number | boolean | { value?: number; passed?: boolean; note?: string };

/** A scorer made by `defineScorer`. */
export interface Scorer {
  readonly kind: 'loopwright-scorer';
  readonly name: string;
  readonly description?: string;
  score(input: ScorerInput): ScorerVerdict | Promise<ScorerVerdict>;
}

/** A scorer definition that cannot be registered; names the scorer. */
export class ScorerError extends Error {
  override name = 'ScorerError';
}

/**
 * Define a custom scorer:
 *
 *   export const savedPrd = defineScorer({
 *     name: 'saved-prd',
 *     score: ({ workspace }) => fs.existsSync(path.join(workspace!, 'docs/prd.md')),
 *   });
 */
export function defineScorer(spec: { name: string; description?: string; score: Scorer['score'] }): Scorer {
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(spec.name)) throw new ScorerError(`Scorer name ${JSON.stringify(spec.name)}: use 1 to 64 letters, digits, _, . and -`);
  if (typeof spec.score !== 'function') throw new ScorerError(`Scorer ${spec.name} has no score function`);
  return { kind: 'loopwright-scorer', name: spec.name, ...(spec.description ? { description: spec.description } : {}), score: spec.score };
}

/** Whether `value` is a scorer made by `defineScorer`. */
export function isScorer(value: unknown): value is Scorer {
  const s = value as Partial<Scorer> | null;
  return s !== null && typeof s === 'object' && s.kind === 'loopwright-scorer' && typeof s.name === 'string' && typeof s.score === 'function';
}

/** Run the scorers `names` of `registered` on one case; a name this worker has not registered is an error outcome. */
export async function runScorers(registered: readonly Scorer[], names: readonly string[], input: ScorerInput): Promise<ScorerOutcome[]> {
  const outcomes: ScorerOutcome[] = [];
  for (const name of names) {
    const scorer = registered.find((s) => s.name === name);
    if (!scorer) {
      outcomes.push({ name, error: `this worker has no scorer ${name} (load it with --scorer-module)` });
      continue;
    }
    try {
      outcomes.push({ name, ...verdictFields(await scorer.score(input)) });
    } catch (err) {
      outcomes.push({ name, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return outcomes;
}

function verdictFields(verdict: ScorerVerdict): Omit<ScorerOutcome, 'name'> {
  if (typeof verdict === 'number') return Number.isFinite(verdict) ? { value: verdict } : { error: `the scorer answered ${verdict}` };
  if (typeof verdict === 'boolean') return { passed: verdict };
  if (verdict === null || typeof verdict !== 'object') return { error: `the scorer answered ${String(verdict)}, not a number, a boolean or {value, passed, note}` };
  return {
    ...(typeof verdict.value === 'number' && Number.isFinite(verdict.value) ? { value: verdict.value } : {}),
    ...(typeof verdict.passed === 'boolean' ? { passed: verdict.passed } : {}),
    ...(typeof verdict.note === 'string' ? { note: verdict.note.slice(0, 500) } : {}),
  };
}
