/**
 * The `edit_file` tool: change part of a saved text file in place. Step-file workflows build a
 * document piece by piece and then update its front matter (`stepsCompleted`); sending the whole
 * document again for a one-line change costs tokens and risks the model rewriting what it should
 * keep. An exact-text replacement changes only what the model names, and says so when it cannot.
 */
import { defineTool } from './tool-spec';

/** The definition of `edit_file`: an exact-text replacement in an existing file inside an output folder. */
export const EDIT_FILE = defineTool({
  name: 'edit_file',
  description: 'Replace old_text with new_text in an existing file, atomically; old_text must occur once (or use replace_all). To create or rewrite a file, use save_output.',
  parameters: {
    file_path: {
      type: 'string',
      nonEmpty: true,
      description: 'The file to change, e.g. {output_folder}/prd.md.',
    },
    old_text: {
      type: 'string',
      nonEmpty: true,
      description: 'The exact text to replace, with enough context to occur once.',
    },
    new_text: { type: 'string', description: 'Its replacement (empty deletes it).' },
    replace_all: { type: 'boolean', optional: true, description: 'Replace every occurrence.' },
  },
  access: 'write',
  target: 'file_path',
  content: 'new_text',
  replaces: 'old_text',
  modes: ['replace_all'],
  // Like save_output: an edit already made is recognised on a retry, so it may be retried longer.
  retries: 'persistent',
  promptRules: ['- To change part of a saved document (front matter such as stepsCompleted, one section), call edit_file instead of saving it again.'],
});
