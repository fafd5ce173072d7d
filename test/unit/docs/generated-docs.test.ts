/**
 * The pages of docs/ generated from the code are current: the command line reference, the
 * troubleshooting page and (with test/unit/settings/settings-doc.test.ts) the configuration. A
 * command, option, error or environment variable added without running scripts/gen-docs.ts fails
 * here, and so does an error without a fix or a variable the configuration page does not list.
 */
import fs from 'node:fs';
import path from 'node:path';
import { generatedPages } from '../../../scripts/gen-docs';
import { GEN_DOCS_COMMAND } from '../../../scripts/docs/markdown';
import { declaredFailures, SOURCE_FOLDERS } from '../../../scripts/docs/failure-catalog';
import { catalogGaps } from '../../../scripts/docs/troubleshooting-doc';
import { ENVIRONMENT, NOT_VARIABLES } from '../../../scripts/docs/environment';
import { renderCliDoc } from '../../../scripts/docs/cli-doc';
import { FLAGGED_SETTINGS } from '../../../cli/setting-flags';
import { ROOT } from './docs-files';

test.each(generatedPages().map(({ file, render }) => [path.relative(ROOT, file), render] as const))('generated docs: %s is what scripts/gen-docs.ts writes', (file, render) => {
  const committed = fs.existsSync(path.join(ROOT, file)) ? fs.readFileSync(path.join(ROOT, file), 'utf8') : '';
  const generated = render();
  if (committed !== generated) console.error(`${file} is out of date with the code: run ${GEN_DOCS_COMMAND}`);
  expect(committed).toBe(generated);
});

test('generated docs: the command line reference has a section for every command, subcommand and option', () => {
  const doc = renderCliDoc();
  for (const heading of ['## loopwright run {#run}', '## loopwright server start {#server-start}', '## loopwright schedule create {#schedule-create}', '## loopwright eval {#eval}']) {
    expect(doc).toContain(heading);
  }
  for (const flags of ['`--max-iterations <n>`', '`--no-project-mcp`', '`-d, --detach`', '`--fail-on <rule>`']) expect(doc).toContain(flags);
});

test('generated docs: every typed error of the code has a cause and a fix on the troubleshooting page', () => {
  const failures = declaredFailures();
  // The ones users meet most, found where they are declared (constants, inline types, classes).
  for (const type of ['LoopwrightBusy', 'ModelRateLimited', 'LoopwrightWorkerMisconfigured', 'BundleNotFound', 'SecurityViolationError', 'UsageError']) {
    expect(failures.map((f) => f.type)).toContain(type);
  }
  expect(catalogGaps(failures)).toEqual({ withoutFix: [], stale: [] });
  for (const failure of failures.filter((f) => f.kind === 'type' && f.file === 'common/failure-types.ts')) expect(failure.doc).not.toBe('');
});

test('generated docs: every environment variable the code reads is on the configuration page', () => {
  const documented = new Set([
    ...Object.values(ENVIRONMENT).flatMap((group) => group.map((v) => v.name)),
    ...FLAGGED_SETTINGS.flatMap(({ setting }) => (setting.flag.env ? [setting.flag.env.name] : [])),
  ]);
  const families = [...documented].filter((name) => name.endsWith('*')).map((name) => name.slice(0, -1));
  const missing = new Set<string>();
  const walk = (folder: string): void => {
    for (const entry of fs.readdirSync(path.join(ROOT, folder), { withFileTypes: true })) {
      const at = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(at);
      else if (entry.name.endsWith('.ts')) {
        for (const [name] of fs.readFileSync(path.join(ROOT, at), 'utf8').matchAll(/\b(?:LOOPWRIGHT|OPENAI|TEMPORAL|OTEL)_[A-Z0-9_]+/g)) {
          if (NOT_VARIABLES.has(name) || documented.has(name) || families.some((family) => name.startsWith(family))) continue;
          missing.add(`${name} (${at})`);
        }
      }
    }
  };
  for (const folder of SOURCE_FOLDERS) walk(folder);
  expect([...missing].sort()).toEqual([]);
});
