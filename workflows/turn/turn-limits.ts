/**
 * A turn's limits, held in one place: the iteration limit (the session's, raised by `extend` while
 * a turn runs), the warning the model gets when the limit is near, and the count of repeated
 * failures that ends a turn `stuck`. The session owns one for its run; the turn asks it, the
 * `extend` update raises it, and a turn handed over to the next run carries what it knows.
 */
import type { ToolCall, ToolResult } from '../../common/messages';
import type { PendingTurn } from '../../common/session-types';
import type { HashedTranscript } from '../../common/transcript';
import { LOOP_TOOL_SPECS } from '../../common/tools';
import { noteRepeatedFailures } from './turn-messages';

/** The human-in-the-loop rules of the limits (sessions recorded before them have none: a fixed limit, no warning). */
export interface LimitRules {
  /** Iterations share at which the model is told the limit is near (0: never). */
  warnAt: number;
  /** Same call, same error, this many times: the turn ends `stuck`. */
  maxRepeatedFailures: number;
  /** The limit was reached in a session a human talks to: reply saying so instead of failing. */
  interactive: boolean;
  /** The warning points at the question tool. */
  loopBreakers: boolean;
}

/** What a turn handed over to the next run carries of its limits. */
export type LimitsCarry = Pick<PendingTurn, 'warned' | 'failures' | 'maxIterations'>;

/** The message a turn ends with when the model keeps asking for tools past the limit. */
export function maxIterationsMessage(max: number): string {
  return `Agent execution exceeded maximum iterations (${max})`;
}

export class TurnLimits {
  /** The running turn's iteration limit (`extend` raises it). */
  private turnMax: number;
  private warned = false;
  private failures: Record<string, number> = {};

  /**
   * @param sessionMax the session's iteration limit per turn
   * @param rules absent for sessions recorded before the human loop: the limit stays `sessionMax`
   * @param pending the turn the run before handed over, whose limit holds until it ends
   * @param onChange told the limit in force whenever it changes (the session's state shows it)
   */
  constructor(
    readonly sessionMax: number,
    readonly rules: LimitRules | undefined,
    pending: PendingTurn | undefined,
    private readonly onChange: (limit: number) => void,
  ) {
    this.turnMax = pending?.maxIterations ?? sessionMax;
  }

  /** The limit in force for the running turn. */
  get limit(): number {
    return this.rules ? this.turnMax : this.sessionMax;
  }

  /** A new turn begins: the session's limit, no warning given, no failures counted. */
  beginTurn(): void {
    this.turnMax = this.sessionMax;
    this.warned = false;
    this.failures = {};
    this.onChange(this.turnMax);
  }

  /** A turn carried over from the run before goes on: its limit, warning and failures as they were. */
  resume(pending: PendingTurn): void {
    this.turnMax = pending.maxIterations ?? this.sessionMax;
    this.warned = pending.warned ?? false;
    this.failures = { ...(pending.failures ?? {}) };
    this.onChange(this.turnMax);
  }

  /** `extend`: raise the running turn's limit by `n` (default the session's limit); the new limit. */
  extend(n?: number | null): number {
    this.turnMax += n ?? this.sessionMax;
    this.onChange(this.turnMax);
    return this.turnMax;
  }

  /** Whether `iterations` used up the limit. */
  reached(iterations: number): boolean {
    return iterations >= this.limit;
  }

  /** The turn's reply when the limit is reached (and `error`, its message). */
  limitReply(partial: string | null): { response: string | null; error: string } {
    const max = this.limit;
    if (!this.rules?.interactive) return { response: partial, error: maxIterationsMessage(max) };
    const response = `I reached this turn's limit of ${max} iterations before finishing.${partial ? ` So far: ${partial}` : ''} Say "continue" to let me go on (or extend the limit).`;
    return { response, error: maxIterationsMessage(max) };
  }

  /** The system message that tells the model the limit is near, once per turn, when it is. */
  warning(iterations: number): string | undefined {
    const rules = this.rules;
    const max = this.limit;
    if (!rules || rules.warnAt <= 0 || this.warned || iterations === 0 || iterations < Math.ceil(max * rules.warnAt)) return undefined;
    this.warned = true;
    const hint = rules.loopBreakers ? ASK_HINT : '';
    return `[Loopwright] ${iterations} of this turn's ${max} iterations are used; ${max - iterations} remain. Finish the task now, or ask the user how to go on${hint}.`;
  }

  /** Count the failing calls of a reply (see `noteRepeatedFailures`); the `stuck` reply when one failed too often. */
  noteFailures(transcript: HashedTranscript, calls: ToolCall[], results: (ToolResult | undefined)[]): string | undefined {
    if (!this.rules) return undefined;
    return noteRepeatedFailures(transcript, calls, results, this.failures, this.rules.maxRepeatedFailures);
  }

  /** What a turn handed over to the next run carries (the limit only when `extend` changed it). */
  carry(): LimitsCarry {
    const max = this.limit;
    return { warned: this.warned, failures: this.failures, ...(this.rules && max !== this.sessionMax ? { maxIterations: max } : {}) };
  }
}

/** How the limit warning points at the question tool. */
const ASK_HINT = LOOP_TOOL_SPECS.filter((spec) => spec.loop === 'question')
  .map((spec) => ` (${spec.name})`)
  .join('');
