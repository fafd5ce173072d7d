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
  description:
    'Change part of an existing text file in place: replace old_text, which must occur exactly once (or every occurrence with replace_all), with new_text. The rest of the file stays as it is; the file is written atomically. To create a file or replace all of it, use save_output.',
  parameters: {
    file_path: {
      type: 'string',
      nonEmpty: true,
      description: 'The file to change, for example {output_folder}/prd.md. Must exist and lie inside an output folder.',
    },
    old_text: {
      type: 'string',
      nonEmpty: true,
      description: 'The exact text to replace, copied from the file with its spaces and line breaks; include enough of the surrounding lines that it occurs only once.',
    },
    new_text: { type: 'string', description: 'The text to put in its place (empty to delete old_text).' },
    replace_all: { type: 'boolean', optional: true, description: 'Replace every occurrence of old_text instead of requiring exactly one (default false).' },
  },
  access: 'write',
  target: 'file_path',
  content: 'new_text',
  replaces: 'old_text',
  modes: ['replace_all'],
  // Like save_output: an edit already made is recognised on a retry, so it may be retried longer.
  retries: 'persistent',
  promptRules: [
    '- To change part of a document you already saved (update front matter such as stepsCompleted, fix or fill in one section), call the edit_file tool with the exact old text and its replacement instead of saving the whole document again.',
  ],
});
