/**
 * Text of the verify phase, shared by the workflow (the message asking the agent to fix the failed
 * items, the reply of an on-demand check) and the clients (status lines). Pure functions.
 */
import { EDIT_FILE } from './tools/edit-file';
import { SAVE_OUTPUT } from './tools/save-output';
import type { ChecklistItemResult, VerificationReport } from './verify-types';

/** Failed items listed in one message to the agent at most (the count covers all of them). */
const FIX_ITEMS = 40;

/** `verified (14/14 items, attempt 2 of 3)`, `failed verification (2 of 14 items failed after 3 attempts)`, `not verified: why`. */
export function verificationLine(report: VerificationReport): string {
  const total = report.passed + report.failed;
  const name = report.name ? `${report.name}: ` : '';
  if (report.status === 'verified') return `${name}verified (${report.passed}/${total} items, attempt ${report.attempts} of ${report.maxAttempts})`;
  if (report.status === 'failed_verification') {
    return `${name}failed verification (${report.failed} of ${total} items failed after ${report.attempts} attempt${report.attempts === 1 ? '' : 's'})`;
  }
  return `${name}not verified${report.reason ? `: ${report.reason}` : ''}`;
}

/** One item as a line: `✗ [Section] item — note`. */
export function itemLine(item: ChecklistItemResult): string {
  const where = item.section ? `[${item.section}] ` : '';
  return `${item.passed ? '✓' : '✗'} ${where}${item.item}${item.note ? ` — ${item.note}` : ''}`;
}

/** The message that sends the failed items back to the agent, after attempt `report.attempts`. */
export function fixRequest(report: VerificationReport): string {
  const failed = report.items.filter((i) => !i.passed);
  const shown = failed.slice(0, FIX_ITEMS).map((i) => `- ${itemLine(i)}`);
  const more = failed.length > shown.length ? [`- ... and ${failed.length - shown.length} more`] : [];
  const left = report.maxAttempts - report.attempts;
  return [
    `[Loopwright verify] ${report.document ?? 'The document'} was checked against the checklist ${report.checklist ?? ''}: ${report.failed} of ${report.passed + report.failed} items failed (attempt ${report.attempts} of ${report.maxAttempts}).`,
    ...shown,
    ...more,
    `Fix these items in the document (change the parts with ${EDIT_FILE.name}, or save it again with ${SAVE_OUTPUT.name}), then answer. ${left} verification attempt${left === 1 ? '' : 's'} left.`,
  ].join('\n');
}

/** The full report as text: the summary line, then every item (a command's reply, `loopwright status`). */
export function reportText(report: VerificationReport): string {
  const lines = [`Verification ${verificationLine(report)}`];
  if (report.document) lines.push(`document: ${report.document}`);
  if (report.checklist) lines.push(`checklist: ${report.checklist}`);
  for (const item of report.items) lines.push(`  ${itemLine(item)}`);
  return lines.join('\n');
}
