/**
 * docs/configuration.md is generated from the settings table: the committed file must be what
 * scripts/gen-settings-doc.ts writes, so a setting added or changed in the table without running
 * the script fails here.
 */
import fs from 'node:fs';
import { renderSettingsDoc, SETTINGS_DOC_COMMAND, SETTINGS_DOC_PATH } from '../../../scripts/gen-settings-doc';

test('docs/configuration.md: is what scripts/gen-settings-doc.ts writes from the settings table', () => {
  const committed = fs.existsSync(SETTINGS_DOC_PATH) ? fs.readFileSync(SETTINGS_DOC_PATH, 'utf8') : '';
  const generated = renderSettingsDoc();
  if (committed !== generated) {
    // The diff below shows what changed; the fix is to regenerate the file and commit it.
    console.error(`docs/configuration.md is out of date with common/settings/session-settings.ts: run ${SETTINGS_DOC_COMMAND}`);
  }
  expect(committed).toBe(generated);
});

test('docs/configuration.md: lists every flag and environment variable of the commands that start sessions', () => {
  const doc = renderSettingsDoc();
  for (const text of [
    '`--max-output-tokens <n>` (run, chat, batch, schedule create, eval)',
    '`--output-root <dir>` (batch)',
    '`--approve <policy>` (chat)',
    '`--stream`, `--no-stream`',
    '`LOOPWRIGHT_VERIFY_ATTEMPTS`',
    '`LOOPWRIGHT_ALLOW_TOOLS`',
  ]) {
    expect(doc).toContain(text);
  }
});
