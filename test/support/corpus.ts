/**
 * Where the tests find the real BMAD files (read only): `../shared/corpus/bmad` beside the checkout,
 * or LOOPWRIGHT_BMAD_CORPUS. A suite that needs them and does not find them is skipped, and says so
 * in the test output (a warning, and a skipped test whose name gives the path looked at), so a
 * skipped conformance suite never passes for a green one.
 */
import { existsSync, realpathSync } from 'node:fs';
import * as path from 'node:path';

const LOOKED_AT = path.resolve(process.env.LOOPWRIGHT_BMAD_CORPUS ?? path.resolve(__dirname, '../../../shared/corpus/bmad'));

/** The corpus folder, real path (the runtime reports symlink-resolved paths). */
export const CORPUS = existsSync(LOOKED_AT) ? realpathSync(LOOKED_AT) : LOOKED_AT;

/**
 * Whether every `parts` (paths below the corpus) exists; when not, `suite` is announced as skipped
 * (a console warning and one skipped test naming what is missing).
 */
export function corpusPresent(suite: string, parts: string[]): boolean {
  const missing = parts.filter((part) => !existsSync(path.join(CORPUS, part)));
  if (missing.length === 0) return true;
  const why = `${suite}: SKIPPED, the BMAD corpus is not at ${CORPUS} (missing ${missing.join(', ')}; set LOOPWRIGHT_BMAD_CORPUS to its folder)`;
  process.stderr.write(`\n${why}\n`);
  test.skip(why, () => undefined);
  return false;
}
