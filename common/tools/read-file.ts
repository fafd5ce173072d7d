/** The `read_file` tool: return a text file of the bundle, the core or the project. */
import { defineTool } from './tool-spec';

export const READ_FILE = defineTool({
  name: 'read_file',
  description:
    'Read a text file from the bundle, the core or the project and return its content. Call it whenever an instruction says to load or read a file (configuration, template, data, task); do not just say you loaded it.',
  parameters: {
    file_path: {
      type: 'string',
      nonEmpty: true,
      description: 'File to read. Path variables are allowed and resolved first, for example {bundle-root}/config.yaml or {core-root}/tasks/workflow.xml.',
    },
  },
  access: 'read',
  target: 'file_path',
  retries: 'quick',
  promptRules: [
    '- You see a file only after loading it. Whenever an instruction, a command or a workflow tells you to load or read a file, call the read_file tool with its path. Paths may keep their variables ({project-root}, {bundle-root}, {core-root}, {config_source}:key); the tools resolve them.',
  ],
});
