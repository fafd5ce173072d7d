/**
 * A project's and a session's own changes to the secret-file list (see `secret-files.ts`), read
 * once, at initialisation, and recorded in the session's `RuntimeContext.secretFiles`:
 * - the file `.loopwright/secret-files` at the project root (gitignore syntax; a line adds a
 *   pattern, `!pattern` lets a default through), read as a regular text file inside the project;
 * - then the session's `secretFiles` setting, the same lines as a list (the client's API).
 *
 * Only the user lets secret files through: a file that lies inside the bundle folder came with the
 * bundle (a stand-alone bundle that is its own project root), so it may add patterns but a `!`
 * line in it is refused (`SecretFilesConfigError`); the user puts such a line in the session's
 * setting, or runs with a project root of their own. The model never writes the file (it is a
 * protected path, see `protected-paths.ts`).
 */
import * as path from 'node:path';
import type { SecretFileRule } from '../../common/runtime-context';
import { BundleError, SecurityViolationError } from '../errors';
import { errorCode } from '../file-errors';
import { guardRead } from './path-guard';
import { isInside } from './path-inside';
import { parseSecretFileRules, parseSecretFileSetting, SECRET_FILES_OVERRIDE, SecretFilesConfigError } from './secret-files';
import { readTextFile } from '../text-content';

/** Largest `.loopwright/secret-files` read. */
export const MAX_SECRET_FILES_BYTES = 64 * 1024;

/** Where the rules are looked for. */
export interface SecretFileSources {
  projectRoot: string;
  /** A file inside it came with the bundle: no `!` line. */
  bundleRoot: string;
  /** The session's `secretFiles` setting. */
  setting?: readonly string[];
}

/**
 * The rules of the project's file, then of the session's setting, in order; empty when neither
 * has any. Throws `SecretFilesConfigError` for a line that is not a pattern (naming the file or
 * setting and the line), for a `!` line in a file inside the bundle folder, and for a file that
 * cannot be read as text (leads out of the project, not a regular file, too large, binary).
 */
export async function loadSecretFileRules(sources: SecretFileSources): Promise<SecretFileRule[]> {
  const rules: SecretFileRule[] = [];
  const file = await readOverrideFile(sources.projectRoot);
  if (file !== undefined) {
    const fileRules = parseSecretFileRules(file.text, { file: file.path });
    if (isInside(file.path, sources.bundleRoot)) refuseLettingThrough(file);
    rules.push(...fileRules);
  }
  if (sources.setting !== undefined) rules.push(...parseSecretFileSetting(sources.setting));
  return rules;
}

/** The project's file, or `undefined` when there is none. */
async function readOverrideFile(projectRoot: string): Promise<{ path: string; text: string } | undefined> {
  const file = path.join(projectRoot, SECRET_FILES_OVERRIDE);
  try {
    const real = await guardRead(file, [projectRoot], { allowSecretFiles: true });
    return { path: real, text: (await readTextFile(real, MAX_SECRET_FILES_BYTES)).content };
  } catch (error) {
    const code = errorCode(error);
    if (!(error instanceof SecurityViolationError) && (code === 'ENOENT' || code === 'ENOTDIR')) return undefined;
    if (!(error instanceof BundleError)) throw error;
    const why = error instanceof SecurityViolationError ? 'it leads out of the project (through a symlink)' : error.message.split('\n')[0];
    throw new SecretFilesConfigError({ file }, undefined, undefined, `the file cannot be read: ${why}`);
  }
}

/** A `!` line in a file that came with the bundle is refused (see the module comment). */
function refuseLettingThrough(file: { path: string; text: string }): void {
  const lines = file.text.split(/\r?\n/);
  const index = lines.findIndex((line) => line.startsWith('!'));
  if (index === -1) return;
  throw new SecretFilesConfigError(
    { file: file.path },
    index + 1,
    lines[index],
    'this file lies inside the bundle folder, so it came with the bundle: a bundle may add secret files but never ' +
      'let one through. Put the line in the session setting secretFiles, or run with a project root of your own',
  );
}
