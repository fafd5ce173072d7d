/** The `task_completion` loop breaker: the turn ends with the model's summary as the reply. */
import { defineLoopTool } from './tool-spec';

export const TASK_COMPLETION = defineLoopTool({
  name: 'task_completion',
  description: 'Say that the task the user asked for is finished, with a short summary of what was done (files saved, decisions made). The turn ends with your summary as the reply.',
  parameters: {
    summary: { type: 'string', nonEmpty: true, description: 'What was done, for the user' },
  },
  loop: 'completion',
  target: 'summary',
  promptRules: ['- When the task the user asked for is done, call task_completion with a short summary of what was done.'],
});
