/** The verify phase of one run of a session, built from its settings, its agent and what the run before carried. */
import type { VerifyCarry } from '../../common/verify-types';
import type { SessionRuntime } from '../session/session-runtime';
import { SessionVerifier } from './verify';

/** The session's verifier: its status shows `verifying` while a document is checked. */
export function sessionVerifier(rt: SessionRuntime, carried: VerifyCarry | undefined): SessionVerifier {
  const init = rt.init!;
  const verifier: SessionVerifier = new SessionVerifier(
    {
      activities: rt.activities,
      settings: rt.input.verify,
      context: () => init.context,
      checks: init.checks ?? [],
      commands: init.agent.commands,
      ...(rt.input.model ? { model: rt.input.model } : {}),
      ...(rt.input.modelSettings ? { modelSettings: rt.input.modelSettings } : {}),
      onChange: () => {
        if (verifier.phase === 'verify') rt.state.status = 'verifying';
        rt.refreshDetails();
      },
    },
    carried,
  );
  return verifier;
}
