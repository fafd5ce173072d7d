/**
 * A recorded session for the eval page's tests (serve routes, browser), made with the fake model
 * on the verify bundle: turn 1 runs `*spec` (reads the workflow, saves the spec, passes its check),
 * turn 2 reads two files. `evalResponder` answers the recording and, for the model
 * `EVAL_CANDIDATE_MODEL`, the candidate with its planted differences: in turn 1 the spec saved with
 * other content (a diverging argument on a write, run in the scratch copy) that fails the checklist
 * item "Names the users" (a failed check, the status changed); in turn 2 the second read skipped
 * and many more tokens spent (so more cost: the session prices its calls). Texts in the message,
 * the saved content and the answers carry markup that a page must show as text.
 */
import path from 'node:path';
import type { ChatMessage } from '../../common/messages';
import type { LoopwrightClient } from '../../client/session-client';
import { type RecordedRequest, type Step, text, toolCalls } from '../../fake-model/server';
import { verdict, writeVerifyBundle } from './verify-bundle';

export const EVAL_CANDIDATE_MODEL = 'candidate-model';
/** Markup in a user message and in answers: shown as text, it never becomes an element. */
export const INJECTED_IMG = '<img src=x onerror="window.__lwInjected=1">';
export const INJECTED_SCRIPT = '<script>window.__lwInjected=2</script>';
export const SECOND_MESSAGE = `read both ${INJECTED_IMG}`;
export const FAILED_ITEM_NOTE = 'no users are named';

const INSTRUCTIONS = { file_path: '{bundle-root}/workflows/spec/instructions.md' };
const CHECKLIST = { file_path: '{bundle-root}/workflows/spec/checklist.md' };

/** The last user message and how many model replies followed it. */
function where(request: RecordedRequest): { message: string; step: number } {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const last = messages.map((m) => m.role).lastIndexOf('user');
  return { message: String(messages[last]?.content ?? ''), step: messages.slice(last).filter((m) => m.role === 'assistant').length };
}

/** The recording's replies, and the candidate's (`request.body.model`) with the planted differences. */
export function evalResponder(request: RecordedRequest): Step {
  const candidate = request.body?.model === EVAL_CANDIDATE_MODEL;
  if (JSON.stringify(request.body?.response_format ?? '').includes('checklist_result')) return candidate ? verdict({ 2: FAILED_ITEM_NOTE }) : verdict();
  const { message, step } = where(request);
  if (message.startsWith('read both')) {
    if (step === 0)
      return toolCalls(
        candidate
          ? [{ name: 'read_file', arguments: INSTRUCTIONS }]
          : [
              { name: 'read_file', arguments: INSTRUCTIONS },
              { name: 'read_file', arguments: CHECKLIST },
            ],
      );
    return text(`Read them. ${INJECTED_IMG}`, candidate ? { usage: { prompt_tokens: 20_000, completion_tokens: 900 } } : {});
  }
  if (step === 0) return toolCalls([{ name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/spec/workflow.yaml' } }]);
  if (step === 1) {
    const content = candidate ? 'Goal: faster invoices.\n' : `Goal: faster invoices for the shop's two clerks. ${INJECTED_SCRIPT}\n`;
    return toolCalls([{ name: 'save_output', arguments: { file_path: '{output_folder}/spec.md', content } }]);
  }
  return text(`Saved the spec. ${INJECTED_SCRIPT}`);
}

/** Record the session in `root` (the fake model must answer with `evalResponder`); its workflow id. */
export async function recordEvalSession(loopwright: LoopwrightClient, root: string): Promise<string> {
  const bundle = writeVerifyBundle(root);
  const session = await loopwright.start({
    bundlePath: bundle,
    agentId: 'writer',
    projectRoot: root,
    outputRoots: [path.join(root, 'docs')],
    verify: { maxAttempts: 1 },
    budget: { prices: { '*': { input: 3, output: 15 } } },
  });
  const first = await session.send('*spec');
  if (first.status !== 'completed' || first.verification?.status !== 'verified') throw new Error(`the recording's first turn ended ${first.status} (${first.verification?.status ?? 'no check'})`);
  const second = await session.send(SECOND_MESSAGE);
  if (second.status !== 'completed') throw new Error(`the recording's second turn ended ${second.status}`);
  await session.end();
  await session.result();
  return session.workflowId;
}
