/**
 * The `list_files` tool: the files of the project whose paths match a glob, so a skill or workflow
 * that says "find every story file" or "glob the module's data files" can be followed without
 * guessing names. Only what `read_file` may read is listed (inside the read roots, no secret
 * files); binary files, symlinks, `node_modules` and `.git` are left out. Offered to sessions with
 * skills or commands (Agent Skills and BMAD 6.4+ skills glob the project); see `offeredWhen`.
 */
import { defineTool } from './tool-spec';

export const LIST_FILES = defineTool({
  name: 'list_files',
  description:
    'List the files whose paths match a glob pattern, sorted, as paths relative to the project root ({project-root}). Secret and binary files, symlinks, node_modules and .git are left out; long lists are cut.',
  parameters: {
    pattern: {
      type: 'string',
      nonEmpty: true,
      description: 'Glob relative to the project root (or to path), e.g. _bmad/**/*.md or docs/*.md; it may start with a path variable: {project-root}/docs/**/*.md.',
    },
    path: { type: 'string', optional: true, description: 'Folder the pattern is relative to (default: the project root); ignored when the pattern starts with a path variable.' },
  },
  access: 'read',
  target: 'pattern',
  retries: 'quick',
  offeredWhen: ['skills', 'commands'],
  promptRules: ['- To find files by name (a skill or workflow says to list, glob or look for files), call list_files with a glob; read a file it lists with read_file as {project-root}/<path>.'],
});
