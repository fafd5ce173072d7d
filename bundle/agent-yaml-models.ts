/**
 * What BMAD's installer adds to a `*.agent.yaml` when it compiles it into a markdown agent: the
 * activation steps around the agent's own critical actions, one menu handler per kind of menu
 * target the agent uses, and the standing rules. `agent-yaml.ts` compiles with these.
 *
 * They come from the installer's own template files when the agent sits in a source tree that has
 * them: a `utility/models/fragments/` folder found by walking up from the agent file, never above
 * the bundle root (`findInstallerModels`). The files used, and how they are filled in as the
 * installer fills them:
 * - `activation-steps.xml`: `<step>`s with `{{module}}` (the agent's module), the agent's critical
 *   actions in place of `{AGENT_SPECIFIC_STEPS}`, and the step numbers (`{MENU_STEP}`,
 *   `{HALT_STEP}`, ... any `{..._STEP}`) counted on from the steps before them;
 * - `handler-<kind>.xml`: one `<handler type>` per kind (`workflow`, `validate-workflow`, `exec`,
 *   `action`, `data`, `tmpl`), in the order the agent's menu first uses each kind;
 * - `activation-rules.xml`: a `<rules>` element, one rule per line.
 * (`menu-handlers.xml` only wraps the handlers and lists their kinds, which the parsed agent does
 * not keep, so it is not read.)
 *
 * When a file is missing (a stand-alone bundle, another release's layout), Loopwright's own
 * equivalent below is used for that part: the same instructions in its own words (load the
 * module's config, which the loader knows as `{config_source}`; remember the user's name; greet and
 * show the numbered menu; wait; match the input; run each kind of item), so a source agent works
 * anywhere, not only in a BMAD checkout.
 *
 * Template files are read like agent files: through the path guard (inside the bundle root after
 * resolving symlinks), regular files only, at most `MAX_TEMPLATE_BYTES` each.
 */
import * as path from 'node:path';
import type { CommandTargetKind, MenuHandler } from './agent-schema';
import { ruleLines, tidy } from './agent-parser';
import { BundleError, BundleLoadError } from './errors';
import { errorCode } from './file-errors';
import { isInside } from './sandbox/path-inside';
import { guardRead } from './sandbox/path-guard';
import { readTextFile } from './text-content';
import { childElements, firstChild, readElement, textOf, XmlSyntaxError, type XmlElement } from './xml-reader';

/** Where the installer keeps its agent templates, below a source tree. */
export const MODELS_FOLDER = path.join('utility', 'models', 'fragments');

/** Largest template file read. */
const MAX_TEMPLATE_BYTES = 64 * 1024;

/** The installer's templates found for an agent; each part absent when its file is. */
export interface InstallerModels {
  /** The `fragments` folder they were read from. */
  folder: string;
  activationSteps?: string;
  rules?: string;
  handlers: Partial<Record<CommandTargetKind, string>>;
  /** Every file read, for the protected paths (the loader reads them again next time). */
  files: string[];
}

const HANDLER_KINDS: readonly CommandTargetKind[] = ['workflow', 'validate-workflow', 'exec', 'action', 'data', 'tmpl'];

/**
 * The installer's templates for the agent file `agentFile`: the first `utility/models/fragments/`
 * folder holding `activation-steps.xml`, looking in the agent's folder and each folder above it up
 * to `root` (the bundle root; never above it). `undefined` when there is none.
 */
export async function findInstallerModels(agentFile: string, root: string, templates?: TemplateReads): Promise<InstallerModels | undefined> {
  const readTemplate = templates === undefined ? readTemplateFile : (file: string, root: string) => templates.read(file, root);
  let current = path.dirname(agentFile);
  while (isInside(current, root)) {
    const folder = path.join(current, MODELS_FOLDER);
    const steps = await readTemplate(path.join(folder, 'activation-steps.xml'), root);
    if (steps !== undefined) {
      const models: InstallerModels = { folder, activationSteps: steps.content, handlers: {}, files: [steps.file] };
      const rules = await readTemplate(path.join(folder, 'activation-rules.xml'), root);
      if (rules !== undefined) {
        models.rules = rules.content;
        models.files.push(rules.file);
      }
      for (const kind of HANDLER_KINDS) {
        const handler = await readTemplate(path.join(folder, `handler-${kind}.xml`), root);
        if (handler === undefined) continue;
        models.handlers[kind] = handler.content;
        models.files.push(handler.file);
      }
      return models;
    }
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  return undefined;
}

/** A template read: its real path and content; `undefined` when the file is missing. */
type TemplateRead = { file: string; content: string } | undefined;

/**
 * The template reads of one bundle load: every agent of a source tree finds the same templates, so
 * the loader, which compiles every agent of the tree, reads each template once instead of once per
 * agent. Only for reads made together (one session start's protected paths); never kept longer.
 */
export class TemplateReads {
  private readonly reads = new Map<string, Promise<TemplateRead>>();

  read(file: string, root: string): Promise<TemplateRead> {
    const key = `${root}\0${file}`;
    let read = this.reads.get(key);
    if (read === undefined) {
      read = readTemplateFile(file, root);
      this.reads.set(key, read);
    }
    return read;
  }
}

async function readTemplateFile(file: string, root: string): Promise<TemplateRead> {
  try {
    const real = await guardRead(file, [root]);
    return { file: real, content: (await readTextFile(real, MAX_TEMPLATE_BYTES)).content };
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (error instanceof BundleError) throw new BundleLoadError(`Installer template ${file} cannot be read: ${error.message}`, { file, cause: error });
    throw error;
  }
}

/**
 * The activation steps of the compiled agent: the template's (or Loopwright's own), with the
 * agent's `actions` in the place of `{AGENT_SPECIFIC_STEPS}` (after every step when the template
 * has no such place). `module` fills `{{module}}`.
 */
export function activationSteps(models: InstallerModels | undefined, module: string, actions: string[]): string[] {
  if (models?.activationSteps === undefined) return [...BUILTIN_STEPS_BEFORE, ...actions, ...BUILTIN_STEPS_AFTER];
  const file = path.join(models.folder, 'activation-steps.xml');
  const text = models.activationSteps.replaceAll('{{module}}', module);
  const marker = text.indexOf('{AGENT_SPECIFIC_STEPS}');
  const before = marker === -1 ? text : text.slice(0, marker);
  const after = marker === -1 ? '' : text.slice(marker + '{AGENT_SPECIFIC_STEPS}'.length);
  const first = stepsOf(before, file);
  // The installer numbers the steps after the agent's on from them, in order.
  let next = first.length + actions.length;
  const numbered = after.replace(/\{[A-Z_]+_STEP\}/g, () => String(++next));
  return [...first, ...actions, ...stepsOf(numbered, file)];
}

/** The handlers for `kinds` (in that order): the template's for each kind, else Loopwright's own. */
export function menuHandlers(models: InstallerModels | undefined, kinds: CommandTargetKind[]): MenuHandler[] {
  return kinds.map((kind) => {
    const template = models?.handlers[kind];
    if (template === undefined) return { type: kind, text: BUILTIN_HANDLERS[kind] };
    const file = path.join(models!.folder, `handler-${kind}.xml`);
    const handler = firstChild(fragment(template, file), 'handler');
    if (!handler) throw new BundleLoadError(`Installer template ${file} has no <handler> element`, { file });
    return { type: handler.attrs.type ?? kind, text: tidy(textOf(handler)) };
  });
}

/** The standing rules: the template's `<rules>` lines, else Loopwright's own. */
export function activationRules(models: InstallerModels | undefined): string[] {
  if (models?.rules === undefined) return [...BUILTIN_RULES];
  const file = path.join(models.folder, 'activation-rules.xml');
  const rules = firstChild(fragment(models.rules, file), 'rules');
  if (!rules) throw new BundleLoadError(`Installer template ${file} has no <rules> element`, { file });
  return ruleLines(rules);
}

function stepsOf(text: string, file: string): string[] {
  return childElements(fragment(text, file), 'step')
    .map((step) => tidy(textOf(step)))
    .filter((s) => s !== '');
}

/** The elements of a template fragment (several top-level elements), under one made-up root. */
function fragment(text: string, file: string): XmlElement {
  try {
    return readElement(`<fragment>${text}</fragment>`, 0);
  } catch (error) {
    if (error instanceof XmlSyntaxError) throw new BundleLoadError(`Invalid installer template ${file}: ${error.message}`, { file });
    throw error;
  }
}

// Loopwright's own equivalents of the installer's templates (see the module comment).

const BUILTIN_STEPS_BEFORE: readonly string[] = [
  'Take on the persona described in this agent (it is already in your context).',
  [
    'Load {config_source} before anything else.',
    'Keep every field of it as a session variable, among them {user_name}, {communication_language} and {output_folder}.',
    'If it cannot be loaded, stop and tell the user; do not go on until it is loaded.',
  ].join('\n'),
  "The user's name is {user_name}; address them by it.",
];

const BUILTIN_STEPS_AFTER: readonly string[] = [
  'Greet {user_name} in {communication_language}, then show every menu item as a numbered list, in menu order.',
  'Then stop and wait for the user: never run a menu item on your own. The user answers with a number or a trigger.',
  'On input: a number runs that menu item; text runs the item whose trigger contains it, ignoring case; when several match, ask which one is meant; when none does, say it was not recognised.',
  'To run a menu item, take its attributes (workflow, exec, tmpl, data, action, validate-workflow) and follow the menu handler of each kind below.',
];

const BUILTIN_HANDLERS: Record<CommandTargetKind, string> = {
  workflow: [
    'An item with workflow="path/to/workflow.yaml":',
    '1. Load the workflow engine {core-root}/tasks/workflow.xml and read all of it: it says how every BMAD workflow runs.',
    "2. Give it the item's workflow.yaml path as its workflow-config.",
    '3. Follow its instructions exactly, step by step.',
    '4. Save the output after each workflow step; never save several steps at once.',
    '5. A path of "todo" means the workflow is not written yet: tell the user so.',
  ].join('\n'),
  'validate-workflow': [
    'An item with validate-workflow="path/to/workflow.yaml":',
    '1. Load the validation task {core-root}/tasks/validate-workflow.xml, read all of it and carry it out.',
    "2. Give it the workflow, and the checklist named by the workflow's validation setting.",
    '3. Find the document to check from the checklist, or ask the user which one it is.',
  ].join('\n'),
  exec: ['An item with exec="path/to/file.md":', 'Load that whole file and carry out its instructions exactly as written; do not improvise.'].join('\n'),
  action: ['An item with action="#id": run the prompt of this agent whose id is "id".', 'An item with any other action text: carry out that text directly as an instruction.'].join('\n'),
  data: ['An item with data="path/to/file" (JSON, YAML, CSV, XML...):', 'Load and parse that file first, and use it as {data} in what the item does next.'].join('\n'),
  tmpl: ['An item with tmpl="path/to/template.md":', "Load that markdown template (its placeholders are written {{like_this}}) and use it as {template} in the item's other handlers."].join('\n'),
  skill: 'An item with skill="name": activate that Agent Skill with the activate_skill tool and follow its instructions.',
};

const BUILTIN_RULES: readonly string[] = [
  'Speak in {communication_language}, unless the communication style says otherwise.',
  'Stay in character until the user chooses exit.',
  'Show menu triggers with their asterisk (*) exactly as written, not as markdown.',
  'Number every list of options; use letters for sub-options.',
  'Load files only when a menu item, a workflow or a command needs them; the config loaded at the start is the one exception.',
  'Documents a workflow writes keep a professional tone, in {communication_language}.',
];
