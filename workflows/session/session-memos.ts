/**
 * What a session writes to its memo, where the Web UI, `list` and rewind find it: the end of a turn
 * that no `send` update answers, and the budgets after each turn.
 */
import { upsertMemo } from '@temporalio/workflow';
import type { TurnResult } from '../../common/session-types';
import { BUDGET_MEMO, TURN_END_MEMO } from '../../common/contract/session-definitions';
import type { ManagedModel } from '../turn/model-calls';
import { excerpt, shortReport } from './session-outcome';

export interface SessionMemos {
  /** Mark where a turn ended that no `send` answers (a first message, a turn resumed in a new run), so rewind and branch find it. */
  markTurnEnd(result: TurnResult): void;
  /** Write the budgets when they changed, so `list` shows them. */
  budgets(managed: ManagedModel | undefined): void;
  /** An eval session's turn: the turn-end mark with the turn's whole summary (figures, check, replay counts), which the eval reads. */
  turnSummary(result: TurnResult): void;
}

/** The memo writers of a run; each is on only when its patch is (runs recorded before them write nothing). */
export function sessionMemos(turnEnds: boolean, budgets: boolean): SessionMemos {
  let written = '';
  return {
    markTurnEnd(result) {
      if (turnEnds) upsertMemo({ [TURN_END_MEMO]: { turn: result.turn, messageRange: result.messageRange, status: result.status } });
    },
    turnSummary(result) {
      const { messageRange, turn, status, success, iterations, usage, response, error, cost, verification, replay, toolCalls } = result;
      upsertMemo({
        [TURN_END_MEMO]: {
          turn,
          messageRange,
          status,
          success,
          iterations,
          usage,
          toolCalls,
          response: excerpt(response),
          ...(error !== undefined ? { error } : {}),
          ...(cost !== undefined ? { cost } : {}),
          ...(verification ? { verification: shortReport(verification) } : {}),
          ...(replay ? { replay } : {}),
        },
      });
    },
    budgets(managed) {
      if (!budgets || !managed?.budgets.active) return;
      const budget = managed.budgets.state();
      const key = JSON.stringify(budget);
      if (key === written) return;
      written = key;
      upsertMemo({ [BUDGET_MEMO]: budget });
    },
  };
}
