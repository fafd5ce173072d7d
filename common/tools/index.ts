/**
 * The built-in tools, in the order the model sees them. Every other place that deals with tools
 * (the workflow, approvals, the Web UI, the system prompt, the worker's activities) derives what it
 * needs from these definitions and never names a tool. Pure data: the workflow imports it.
 */
import { ACTIVATE_SKILL } from './activate-skill';
import { ASK_QUESTION } from './ask-question';
export { DELEGATE_TASK, delegateDescription } from './delegate-task';
export { RUN_SUBAGENT } from './run-subagent';
import { EDIT_FILE } from './edit-file';
import { EXECUTE_WORKFLOW } from './execute-workflow';
import { LIST_FILES } from './list-files';
import { READ_FILE } from './read-file';
import { RUN_COMMAND } from './run-command';
import { SAVE_OUTPUT } from './save-output';
import { SEARCH_FILES } from './search-files';
import { TASK_COMPLETION } from './task-completion';
import type { BuiltInFeature, LoopToolSpec, ToolSpec } from './tool-spec';

/** The tools that run as activities, one activity type each. */
export const TOOL_SPECS = [READ_FILE, EXECUTE_WORKFLOW, SAVE_OUTPUT, EDIT_FILE, LIST_FILES, SEARCH_FILES, ACTIVATE_SKILL, RUN_COMMAND] as const;

/** The loop-breaking tools, offered unless a session turns them off (`loopBreakers: false`). */
export const LOOP_TOOL_SPECS = [ASK_QUESTION, TASK_COMPLETION] as const;

export type ToolName = (typeof TOOL_SPECS)[number]['name'];
export type LoopToolName = (typeof LOOP_TOOL_SPECS)[number]['name'];

/** The names of the tools that run as activities; the workflow answers any other name as unknown. */
export const TOOL_NAMES: readonly ToolName[] = TOOL_SPECS.map((spec) => spec.name);
export const LOOP_TOOL_NAMES: readonly LoopToolName[] = LOOP_TOOL_SPECS.map((spec) => spec.name);

/** The definition of the tool `name` among `specs` (by default the built-in ones), if there is one. */
export function toolSpec(name: string): ToolSpec | undefined;
export function toolSpec<T extends { name: string }>(name: string, specs: readonly T[]): T | undefined;
export function toolSpec(name: string, specs?: readonly { name: string }[]): { name: string } | undefined {
  return (specs ?? TOOL_SPECS).find((spec) => spec.name === name);
}

/** The definition of the loop-breaking tool `name`, if it is one. */
export function loopToolSpec(name: string, specs: readonly LoopToolSpec[] = LOOP_TOOL_SPECS): LoopToolSpec | undefined {
  return specs.find((spec) => spec.name === name);
}

export function isToolName(name: string): name is ToolName {
  return toolSpec(name) !== undefined;
}

export function isLoopToolName(name: string): name is LoopToolName {
  return loopToolSpec(name) !== undefined;
}

/**
 * The built-in tools a session with these features is offered (a tool with nothing to act on would
 * only mislead the model): those without `offeredWhen`, and those with one of its features on.
 */
export function offeredBuiltIns(features: Partial<Record<BuiltInFeature, boolean>>): ToolSpec[] {
  return TOOL_SPECS.filter((spec: ToolSpec) => {
    if (spec.offeredWhen === undefined) return true;
    const wanted: readonly BuiltInFeature[] = typeof spec.offeredWhen === 'string' ? [spec.offeredWhen] : spec.offeredWhen;
    return wanted.some((feature) => features[feature] === true);
  });
}
