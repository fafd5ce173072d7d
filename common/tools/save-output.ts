/** The `save_output` tool: write generated content to a file inside an output folder, atomically. */
import { defineTool } from './tool-spec';

/** The definition of `save_output`: write (or append to) a file inside an output folder. */
export const SAVE_OUTPUT = defineTool({
  name: 'save_output',
  description:
    'Write generated content to a file (for example a finished workflow document), or add it at the end of one (mode "append"). Folders are created as needed; the file is written atomically.',
  parameters: {
    file_path: {
      type: 'string',
      nonEmpty: true,
      description: 'Where to write the file, for example {output_folder}/requirements-{date}.md. Must lie inside an output folder.',
    },
    content: { type: 'string', description: 'The full text to write; an existing file at that path is replaced (with mode "append": the text to add at its end).' },
    mode: {
      type: 'enum',
      values: ['replace', 'append'],
      optional: true,
      description:
        '"replace" (the default): the file becomes content. "append": content is added exactly as given after the last character of the file, which is created when missing; start content with a line break when it begins a new section.',
    },
  },
  access: 'write',
  target: 'file_path',
  content: 'content',
  modes: ['mode'],
  // It writes atomically and is idempotent (an append already made is recognised on a retry), so it
  // may be retried longer: losing a finished document to a passing disk or worker problem is the
  // worst outcome of a session.
  retries: 'persistent',
  promptRules: [
    '- To write a document, call the save_output tool with the target path and the complete content.',
    '- When a workflow builds a document section by section, call save_output with mode "append" to add each new section at its end instead of sending the whole document again.',
  ],
});
