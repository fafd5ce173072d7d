/** How the verify phase takes part in a turn: its turn extension. */
import { reportText } from '../../common/verify-report';
import type { TurnExtension } from '../turn/extensions';
import type { SessionVerifier } from './verify';

/**
 * Verification as a turn extension: a menu item that checks a document is the turn itself; saved
 * documents are noted from the tool results; at the answer a saved document is checked, and its
 * failed items go back to the model (until the attempts run out); the report joins the turn's result.
 */
export function verifyExtension(verifier: SessionVerifier): TurnExtension {
  return {
    name: 'verify',
    onTurnStart: () => verifier.startTurn(),
    command: (message) => {
      const check = verifier.commandFor(message);
      if (!check) return undefined;
      return async (at) => {
        const report = await verifier.runCommand(check, at.turn, at.recordUsage);
        const response = reportText(report);
        if (report.status !== 'failed_verification') return { status: 'completed', response };
        return { status: 'failed_verification', response, error: `${report.failed} of ${report.passed + report.failed} checklist items failed` };
      };
    },
    onToolResults: (calls, results, writes) => verifier.noteToolResults(calls, results, writes),
    // The verifier's own promise: the turn goes on at the tick it always did.
    onAnswer: (at) => verifier.atAnswer(at.turn, at.recordUsage),
    report: () => {
      const verification = verifier.turnReport();
      return verification ? { verification } : {};
    },
  };
}
