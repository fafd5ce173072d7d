/**
 * Writes the pages of docs/ that are generated from the code, so they cannot drift from it:
 * the command line reference (from the command definitions in cli/), the configuration (from the
 * settings table and the environment variables) and troubleshooting (from the typed errors).
 *
 *   npx ts-node --transpile-only scripts/gen-docs.ts           # (re)write the pages
 *   npx ts-node --transpile-only scripts/gen-docs.ts --check   # exit 1 when one is out of date
 *
 * test/unit/docs/generated-docs.test.ts fails while a committed page differs from what this writes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { renderSettingsDoc, SETTINGS_DOC_PATH } from './gen-settings-doc';
import { CLI_DOC, renderCliDoc } from './docs/cli-doc';
import { renderTroubleshootingDoc, TROUBLESHOOTING_DOC } from './docs/troubleshooting-doc';
import { GEN_DOCS_COMMAND } from './docs/markdown';

/** The docs/ folder. */
export const DOCS_DIR = path.join(__dirname, '..', 'docs');

/** Every generated page: its path and what it should hold. */
export function generatedPages(): { file: string; render: () => string }[] {
  return [
    { file: path.join(DOCS_DIR, CLI_DOC), render: renderCliDoc },
    { file: SETTINGS_DOC_PATH, render: renderSettingsDoc },
    { file: path.join(DOCS_DIR, TROUBLESHOOTING_DOC), render: renderTroubleshootingDoc },
  ];
}

if (require.main === module) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const { file, render } of generatedPages()) {
    const text = render();
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    if (current === text) continue;
    const name = path.relative(process.cwd(), file);
    if (check) {
      process.stderr.write(`${name} is out of date with the code; run ${GEN_DOCS_COMMAND}\n`);
      stale++;
    } else {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      process.stdout.write(`wrote ${name}\n`);
    }
  }
  if (stale > 0) process.exit(1);
}
