/**
 * What a session writes to its memo, where the Web UI, `list` and rewind find it: the end of a turn
 * that no `send` update answers, and the budgets after each turn.
 */
import { upsertMemo } from '@temporalio/workflow';
import type { TurnResult } from '../../common/session-types';
import { BUDGET_MEMO, TURN_END_MEMO } from '../../common/contract/session-definitions';
import type { ManagedModel } from '../turn/model-calls';

export interface SessionMemos {
  /** Mark where a turn ended that no `send` answers (a first message, a turn resumed in a new run), so rewind and branch find it. */
  markTurnEnd(result: TurnResult): void;
  /** Write the budgets when they changed, so `list` shows them. */
  budgets(managed: ManagedModel | undefined): void;
}

/** The memo writers of a run; each is on only when its patch is (runs recorded before them write nothing). */
export function sessionMemos(turnEnds: boolean, budgets: boolean): SessionMemos {
  let written = '';
  return {
    markTurnEnd(result) {
      if (turnEnds) upsertMemo({ [TURN_END_MEMO]: { turn: result.turn, messageRange: result.messageRange, status: result.status } });
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
