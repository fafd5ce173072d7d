/**
 * A scripted stand-in for a model, used by `loopwright demo` when no OPENAI_API_KEY is set. It
 * plays the requirements facilitator's `*intake` command the way a model would: load the workflow
 * with `execute_workflow`, fill the template from the user's message, save it with `save_output`,
 * then answer. Its replies are canned; it exists so the quick start runs anywhere.
 */
import type { ChatMessage, ToolMessage } from '../common/messages';
import type { RecordedRequest } from './recorded-request';
import { type Responder, text, toolCalls } from './steps';

/** What the scripted model writes into the intake template's placeholders. */
const ANSWERS: Record<string, string> = {
  summary: 'A shared tool library for the neighbourhood, so people borrow a drill instead of buying one.',
  stakeholders: '- Borrowers (residents)\n- Lenders who own the tools\n- The volunteer who keeps the shed (assumed)',
  needs:
    '- As a borrower, I need to see which tools are free so that I do not walk over for nothing.\n' +
    '- As a lender, I need to know who has my tool so that I get it back.\n' +
    '- As the volunteer, I need overdue reminders sent for me so that I do not chase people.',
  success_criteria: '- 30 loans in the first month\n- No tool missing for more than two weeks',
  constraints: '- No budget beyond a small web host (assumed)\n- Must work on a phone',
  open_questions: '- Is a deposit needed for expensive tools?\n- Who repairs a broken tool?',
};

/** The responder the fake model server uses for the demo. */
export const demoResponder: Responder = (request: RecordedRequest) => {
  const messages = request.body?.messages ?? [];
  const last = messages[messages.length - 1];
  if (!last) return text('No messages were sent.');
  if (last.role === 'user') return replyToUser(last.content);
  if (last.role === 'tool') return replyToTool(messages, last);
  return text('I am ready for your next message.');
};

function replyToUser(content: string): ReturnType<Responder> {
  if (content.includes('*intake')) {
    return toolCalls([{ name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/intake/workflow.yaml' } }]);
  }
  if (content.includes('*help')) {
    return text('1. *help — this list\n2. *intake — capture first requirements\n3. *summary — summarise a saved document\n4. *exit — end the session');
  }
  return text('(scripted model) Try *intake to run the intake workflow end to end, or *help for the commands.');
}

function replyToTool(messages: ChatMessage[], last: ToolMessage): ReturnType<Responder> {
  const result = JSON.parse(last.content) as Record<string, unknown>;
  const call = findCall(messages, last.tool_call_id);
  if (!result.success) return text(`The ${call ?? 'tool'} call failed: ${String(result.error)}`);
  if (call === 'execute_workflow') {
    const config = (result.config ?? {}) as Record<string, unknown>;
    const document = fillTemplate(String(result.template ?? ''), {
      ...ANSWERS,
      project_name: String(config.project_name ?? 'the project'),
      user_name: String(config.user_name ?? 'you'),
      date: /^\d{4}-\d{2}-\d{2}$/.test(String(config.date)) ? String(config.date) : new Date().toISOString().slice(0, 10),
    });
    return toolCalls([{ name: 'save_output', arguments: { file_path: '{output_folder}/requirements-{date}.md', content: document } }]);
  }
  if (call === 'save_output') {
    return text(`Step 6: Save the document — done. I wrote your first requirements to ${String(result.path)} ` + `(${String(result.size)} bytes). Read it through and tell me what to change.`);
  }
  return text('Loaded.');
}

function findCall(messages: ChatMessage[], id: string): string | undefined {
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    const call = message.tool_calls?.find((c) => c.id === id);
    if (call) return call.function.name;
  }
  return undefined;
}

/** Replace `{{name}}` placeholders; unknown ones stay visible. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => values[key] ?? whole);
}
