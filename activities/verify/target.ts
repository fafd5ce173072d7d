/**
 * Finding and reading what the verifier checks: the checklist and the document of a VerifyTarget.
 * Paths are resolved with the session's variables (a workflow's own variables, `{installed_path}`
 * and its config's keys, when the workflow had to be loaded); a missing checklist or document is
 * taken from the workflow's `validation` (or `checklist`) and `default_output_file`. Files are read
 * with the same guards as the `read_file` tool: the read roots, the secret-file rules, the hard-link
 * rule, the read limit, text only.
 *
 * What the session can fix (no such file, a path outside the roots, a secret or binary file, a
 * variable with no value, a path that names no single file) is a `problem` sentence; an I/O fault
 * that may pass (EIO, EMFILE...) and a cancellation are thrown.
 */
import type { RuntimeContext } from '../../common/runtime-context';
import type { VerifyTarget } from '../../common/verify-types';
import { BundleError } from '../../bundle/errors';
import { errorCode, MODEL_FIXABLE_CODES } from '../../bundle/file-errors';
import { guardRead, secretOptionsOf } from '../../bundle/sandbox/path-guard';
import { readTextFile } from '../../bundle/text-content';
import { findUnresolved, resolveVariables } from '../../bundle/variables';
import { resolveWorkflow, type ResolvedWorkflow } from '../../bundle/workflow-loader';
import { isCancellation } from '../tools/tool-failure';

/** What a target names, before reading. */
export interface LocatedTarget {
  /** Resolved paths, and how each was named (for problems). */
  checklist: { path: string; label: string };
  document: { path: string; label: string };
  /** Real path of the workflow.yaml, when it was loaded. */
  workflow?: string;
}

/** A file read, or why not. */
export type ReadOutcome = { ok: true; path: string; content: string } | { ok: false; problem: string };

/** Either a value or a problem sentence. */
export type Found<T> = { ok: true; value: T } | { ok: false; problem: string };

/** The checklist and document paths of `target`, resolved; the workflow is loaded only when one is missing. */
export async function locateTarget(target: VerifyTarget, ctx: RuntimeContext): Promise<Found<LocatedTarget>> {
  let workflow: ResolvedWorkflow | undefined;
  if ((target.checklist === undefined || target.document === undefined) && target.workflow !== undefined) {
    try {
      workflow = await resolveWorkflow(target.workflow, ctx);
    } catch (error) {
      return { ok: false, problem: `the workflow ${target.workflow} cannot be loaded: ${reasonOf(error)}` };
    }
  }
  const vars = workflow?.variables ?? ctx.variables;
  const checklist = pick('checklist', target.checklist, workflow, vars);
  if (!checklist.ok) return checklist;
  const document = pick('document', target.document, workflow, vars);
  if (!document.ok) return document;
  return { ok: true, value: { checklist: checklist.value, document: document.value, ...(workflow ? { workflow: workflow.path } : {}) } };
}

/** One path: as given (resolved strictly), else from the workflow's config. */
function pick(role: 'checklist' | 'document', given: string | undefined, workflow: ResolvedWorkflow | undefined, vars: Record<string, string>): Found<{ path: string; label: string }> {
  if (given !== undefined) {
    let resolved: string;
    try {
      resolved = resolveVariables(given, vars, { strict: true });
    } catch (error) {
      return { ok: false, problem: `the ${role} ${given} cannot be read: ${reasonOf(error)}` };
    }
    if (hasPlaceholder(resolved)) return { ok: false, problem: `the ${role} ${given} names no single file (it holds a placeholder)` };
    return { ok: true, value: { path: resolved, label: given } };
  }
  if (workflow === undefined) {
    const what = role === 'checklist' ? 'the checklist, or a workflow with a validation checklist' : 'the document, or a workflow with a default_output_file';
    return { ok: false, problem: `no ${role} to check: give ${what}` };
  }
  const fields = role === 'checklist' ? ['validation', 'checklist'] : ['default_output_file'];
  const field = fields.find((key) => typeof workflow.config[key] === 'string' && (workflow.config[key] as string).trim() !== '');
  if (field === undefined) {
    return { ok: false, problem: `the workflow ${workflow.path} names no ${role} (${fields.join(' or ')}); give the ${role}` };
  }
  const value = (workflow.config[field] as string).trim();
  if (hasPlaceholder(value)) {
    return { ok: false, problem: `the workflow's ${field} ${value} names no single file; give the ${role}` };
  }
  return { ok: true, value: { path: value, label: value } };
}

/** Whether `text` still holds a `{variable}`, `{config_source}:key` or `{{placeholder}}`. */
export function hasPlaceholder(text: string): boolean {
  return findUnresolved(text).length > 0 || /\{\{[^{}]*\}\}/.test(text);
}

/** Read `path` (already resolved) as `read_file` would; `label` names it in a problem. */
export async function readGuarded(path: string, role: 'checklist' | 'document', label: string, ctx: RuntimeContext, signal?: AbortSignal): Promise<ReadOutcome> {
  try {
    const real = await guardRead(path, ctx.readRoots, secretOptionsOf(ctx));
    const { content } = await readTextFile(real, ctx.maxReadBytes, signal, { allowHardLinks: ctx.allowHardLinks === true });
    return { ok: true, path: real, content };
  } catch (error) {
    return { ok: false, problem: `the ${role} ${label} cannot be read: ${reasonOf(error)}` };
  }
}

/**
 * Why a file could not be read, for a problem sentence; rethrows what is not the session's to fix
 * (a cancellation, an I/O fault that may pass on retry). The guard's refusal of an outside path
 * keeps its fixed message, so nothing about the outside path is told.
 */
function reasonOf(error: unknown): string {
  if (isCancellation(error)) throw error;
  if (error instanceof BundleError) return error.message;
  const code = errorCode(error) ?? '';
  if (code === 'ENOENT') return 'no such file';
  if (MODEL_FIXABLE_CODES.has(code)) return (error as Error).message;
  throw error;
}
