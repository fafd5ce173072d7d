/**
 * Writes docs/troubleshooting.md: every typed error the code declares (failure-catalog.ts), with
 * its cause (its TSDoc) and its fix (failure-fixes.ts), in groups. An error without a fix, or a fix
 * for an error the code no longer has, is an error here, so the page cannot fall behind the code.
 */
import { declaredFailures, type DeclaredFailure } from './failure-catalog';
import { FAILURE_FIXES, FAILURE_GROUPS, type FailureGroup } from './failure-fixes';
import { code, escapeText, generatedNote } from './markdown';

/** The page, relative to docs/. */
export const TROUBLESHOOTING_DOC = 'troubleshooting.md';

/** The errors found in the code that have no fix, and the fixes whose error is gone. */
export function catalogGaps(failures: readonly DeclaredFailure[] = declaredFailures()): { withoutFix: string[]; stale: string[] } {
  const types = new Set(failures.map((f) => f.type));
  return {
    withoutFix: failures.filter((f) => FAILURE_FIXES[f.type] === undefined).map((f) => `${f.type} (${f.file})`),
    stale: Object.keys(FAILURE_FIXES).filter((type) => !types.has(type)),
  };
}

/** The whole of docs/troubleshooting.md. */
export function renderTroubleshootingDoc(): string {
  const failures = declaredFailures();
  const { withoutFix, stale } = catalogGaps(failures);
  if (withoutFix.length > 0 || stale.length > 0) {
    const problems = [
      ...(withoutFix.length > 0 ? [`errors without a fix in scripts/docs/failure-fixes.ts: ${withoutFix.join(', ')}`] : []),
      ...(stale.length > 0 ? [`fixes of errors the code no longer declares: ${stale.join(', ')}`] : []),
    ];
    throw new Error(`docs/troubleshooting.md cannot be written: ${problems.join('; ')}`);
  }
  const lines = [
    '# Troubleshooting',
    '',
    generatedNote('the failure types and error classes declared in the code, with the fixes in scripts/docs/failure-fixes.ts'),
    '',
    'Every typed error Loopwright raises, with what causes it and what to do. The name is what you see:',
    'the `type` of a Temporal failure (in the Web UI, `temporal workflow show`, or a client that catches it),',
    'the `type` of a `--json` failure of the command line (`{"error": "…", "type": "LoopwrightBusy"}`), or the',
    "class of an error a worker or the command line reports. Failures whose type is the model server's are",
    'retried by Temporal unless marked non-retryable; the others end the call at once because only a person',
    'can fix them. Errors of the Temporal SDK itself (`WorkflowNotFoundError`, …) keep their own names:',
    '`WorkflowNotFoundError` means no session has that id in the namespace (`loopwright list` shows the ones that exist).',
    '',
    'Exit statuses of the command line are in the [command line reference](reference/cli.md#exit-statuses); the',
    "HTTP API's error types (`BadRequest`, `NotFound`, …) in the [HTTP API](../serve/API.md).",
    '',
    ...Object.keys(FAILURE_GROUPS).map((group) => `- [${FAILURE_GROUPS[group as FailureGroup]}](#${group})`),
    '',
  ];
  for (const [group, title] of Object.entries(FAILURE_GROUPS)) {
    lines.push(`## ${title} {#${group}}`, '');
    for (const failure of failures.filter((f) => FAILURE_FIXES[f.type]!.group === group)) lines.push(...entry(failure));
  }
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}

/** One error: its name as a heading (searchable, with an anchor of its own), cause, fix and where it is declared. */
function entry(failure: DeclaredFailure): string[] {
  const fix = FAILURE_FIXES[failure.type]!;
  const cause = fix.cause ?? failure.doc;
  const declared = failure.kind === 'class' ? `error class${failure.extendsName && failure.extendsName !== 'Error' ? ` (a ${code(failure.extendsName)})` : ''}` : 'failure type';
  return [
    `### ${failure.type} {#${failure.type.toLowerCase()}}`,
    '',
    `**Cause.** ${escapeText(cause)}`,
    '',
    `**Fix.** ${fix.fix}`,
    '',
    `<small>A ${declared}, declared in ${code(failure.file)}.</small>`,
    '',
  ];
}
