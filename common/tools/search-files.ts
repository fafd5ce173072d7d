/**
 * The `search_files` tool: the lines of the project's text files that match a regular expression,
 * as `path:line: text`, so the model finds where a setting, heading or name occurs without reading
 * file after file. The expression runs on a linear-time engine (RE2), so no pattern can hang a
 * worker; what it scans and returns is bounded. It skips what `list_files` leaves out. Offered to
 * sessions with skills or commands; see `offeredWhen`.
 */
import { defineTool } from './tool-spec';

export const SEARCH_FILES = defineTool({
  name: 'search_files',
  description:
    'Search text files for a regular expression (RE2 syntax: no lookaround or backreferences), line by line, and return the matching lines as path:line: text, paths relative to the project root ({project-root}). Secret and binary files, symlinks, node_modules and .git are skipped; results are capped.',
  parameters: {
    pattern: { type: 'string', nonEmpty: true, description: 'The regular expression, e.g. stepsCompleted or ^## .*Goals.' },
    path: { type: 'string', optional: true, description: 'Folder or file to search (default: the project root); path variables are allowed.' },
    glob: { type: 'string', optional: true, description: 'Search only the files matching this glob, relative to path, e.g. **/*.md; one without / matches file names at any depth (*.yaml).' },
    ignore_case: { type: 'boolean', optional: true, description: 'Match upper and lower case alike.' },
  },
  access: 'read',
  target: 'pattern',
  retries: 'quick',
  offeredWhen: ['skills', 'commands'],
  promptRules: ['- To find where a text occurs in the project (a setting, a heading, a name), call search_files with a regular expression instead of reading file after file.'],
});
