/** The `save_output` tool: write generated content to a file inside an output folder, atomically. */
import { defineTool } from './tool-spec';

export const SAVE_OUTPUT = defineTool({
  name: 'save_output',
  description:
    'Write generated content to a file (for example a finished workflow document). Folders are created as needed; the file is written atomically.',
  parameters: {
    file_path: {
      type: 'string',
      nonEmpty: true,
      description: 'Where to write the file, for example {output_folder}/requirements-{date}.md. Must lie inside an output folder.',
    },
    content: { type: 'string', description: 'The full text to write; an existing file at that path is replaced.' },
  },
  access: 'write',
  target: 'file_path',
  content: 'content',
  // It writes atomically and is idempotent, so it may be retried longer: losing a finished
  // document to a passing disk or worker problem is the worst outcome of a session.
  retries: 'persistent',
  promptRules: ['- To write a document, call the save_output tool with the target path and the complete content.'],
});
