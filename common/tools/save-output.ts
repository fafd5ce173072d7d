/** The `save_output` tool: write generated content to a file inside an output folder, atomically. */
import { defineTool } from './tool-spec';

/** The definition of `save_output`: write (or append to) a file inside an output folder. */
export const SAVE_OUTPUT = defineTool({
  name: 'save_output',
  description: 'Write content to a file (e.g. a finished workflow document), or with mode "append" add it at the end; folders are created, the write is atomic.',
  parameters: {
    file_path: {
      type: 'string',
      nonEmpty: true,
      description: 'Where to write the file, for example {output_folder}/requirements-{date}.md. Must lie inside an output folder.',
    },
    content: { type: 'string', description: 'The full text (with mode "append": the text to add).' },
    mode: {
      type: 'enum',
      values: ['replace', 'append'],
      optional: true,
      description: '"replace" (default) or "append" (creates a missing file; start content with a line break for a new section).',
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
  promptRules: ['- To write a document, call the save_output tool with the target path and the complete content; to add a section at its end, use mode "append".'],
});
