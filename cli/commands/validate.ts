/**
 * `loopwright validate <bundle> [--json]`: checks a bundle without calling a model and prints each
 * problem with its file and field. Exit status 0 when none, 1 when there are problems.
 */
import { checkBundle, type Problem, type ValidationReport } from '../../bundle/validate';
import type { CommandOutput } from '../output';

/** Runs the command; resolves to the exit status. */
export async function validateCommand(bundlePath: string, options: { json?: boolean }, out: CommandOutput): Promise<number> {
  const report = await checkBundle(bundlePath);
  // With --json, problems are a failure like any other: the report also carries `error` and `type`.
  const failure = report.problems.length === 0 ? {} : { error: `${report.problems.length} problem(s) in ${report.bundleRoot ?? bundlePath}`, type: 'BundleInvalid' };
  if (options.json) out.log(JSON.stringify({ ...report, ...failure }, null, 2));
  else out.log(formatReport(bundlePath, report));
  return report.problems.length === 0 ? 0 : 1;
}

/**
 * The human-readable report: one line per problem, `file  field: message`, and per warning,
 * `file  field: warning: message`, then a summary. Warnings alone do not fail validation.
 */
export function formatReport(bundlePath: string, report: ValidationReport): string {
  const { agents, commands, workflows } = report.checked;
  const checked = `${agents} agent(s), ${commands} command(s), ${workflows} workflow(s) checked`;
  const warnings = report.warnings ?? [];
  if (report.problems.length === 0 && warnings.length === 0) return `${report.bundleRoot ?? bundlePath}: no problems (${checked})`;
  const lines = [`${report.bundleRoot ?? bundlePath}:`];
  const add = (p: Problem, label: string) => {
    const [first, ...rest] = p.message.split('\n');
    lines.push(`  ${p.file}${p.field ? `  ${p.field}` : ''}: ${label}${first}`);
    for (const line of rest) lines.push(`      ${line}`);
  };
  for (const p of report.problems) add(p, '');
  for (const w of warnings) add(w, 'warning: ');
  lines.push(`${report.problems.length} problem(s)${warnings.length > 0 ? `, ${warnings.length} warning(s)` : ''}; ${checked}`);
  return lines.join('\n');
}
