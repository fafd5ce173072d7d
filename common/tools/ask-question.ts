/** The `ask_question` loop breaker: the turn ends with a question; the user's next message is the call's result. */
import { defineLoopTool } from './tool-spec';

export const ASK_QUESTION = defineLoopTool({
  name: 'ask_question',
  description:
    "Ask the user a question and wait for the answer. Use it when you need information or a decision only the user can give (a workflow step that asks the user, a choice between options, missing facts); the answer comes back as this call's result.",
  parameters: {
    question: { type: 'string', nonEmpty: true, description: 'The question for the user, complete and self-contained' },
  },
  loop: 'question',
  target: 'question',
  promptRules: [
    '- When you need an answer only the user can give (a step that asks the user, a choice, missing facts), call ask_question with the complete question and stop; the answer comes back as its result.',
  ],
});
