/**
 * Compiles a BMAD v6 source agent (`*.agent.yaml`) in memory into the `AgentDefinition` that
 * `parseAgent` yields for the markdown agent BMAD's installer would write from it, so a source
 * agent and its installed compilation give the model the same system prompt, critical actions and
 * commands.
 *
 * The source: `agent.metadata` {id, name, title, icon, module}, `agent.persona` {role, identity,
 * communication_style, principles (a list or a text)}, `agent.critical_actions` (a list),
 * `agent.menu` (items with `trigger` and any of `workflow`, `exec`, `action`, `validate-workflow`,
 * `data`, `tmpl`, plus `checklist`, `document`, `description`) and `agent.prompts` ([{id, content}]).
 *
 * The installer's rules, worked out from the twelve v6.0.0-alpha.5 sources and their installed
 * compilations (and what Loopwright decided where they leave room):
 * - id, name, title, icon: from `metadata`; without `metadata.id`, the file name without
 *   `.agent.yaml` (Loopwright's choice: the installer always had one).
 * - persona: the texts as written; a list of principles is joined into one text with spaces.
 * - critical actions: the activation steps, with the agent's `critical_actions` after the steps
 *   that load the config and remember the user's name, before greeting and menu (see
 *   `agent-yaml-models.ts`: from the installer's templates when the source tree has them, else
 *   Loopwright's own wording). `{{module}}` is `metadata.module`, else the name of the module
 *   folder (the folder holding `agents/`), as the installer's `core` agent shows.
 * - menu: `*help` (first) and `*exit` (last) are added, with the installer's labels, unless the
 *   menu has them already (Loopwright's choice: never twice); every trigger gets a `*` prefix
 *   unless it has one. Targets keep their text (variables unresolved); `run-workflow` is read as
 *   `workflow`, as the XML parser does. `checklist` and `document` are kept on the command (the
 *   installer drops them; the system prompt does not show them, so the prompt stays the same).
 * - menu handlers: one per target kind the menu uses, in the order the menu first uses each kind
 *   (the keys of an item in the order written).
 * - rules: the installer's activation rules (or Loopwright's own).
 * - prompts: `{id, content}` becomes a prompt with that id, which `action="#id"` runs.
 * - Every text is tidied as the XML parser tidies element text (edge blank lines and common
 *   indentation dropped), so a block scalar reads as the same text once compiled.
 * - Unknown keys are ignored (other BMAD releases add some); a wrong type is an error.
 *
 * What remains different from the installed compilation, by design: `dialect` is `yaml` and `file`
 * the source file; `checklist`/`document` are kept; and whatever the installer takes from the
 * install itself rather than the source: an `_cfg/agents/<module>-<name>.customize.yaml` override
 * (its name, persona, extra critical actions, menu items, memories and prompts are merged only by
 * the installer), and with Loopwright's own wording (no templates found) the steps, handlers and
 * rules say the same things in other words.
 *
 * Limits: those of agent files (`MAX_AGENT_CHARS`, `MAX_AGENT_TEXT_CHARS`, `MAX_CRITICAL_ACTIONS`)
 * and those of the safe YAML reader (`MAX_YAML_BYTES` and the rest, `safe-yaml.ts`). Errors are
 * `AgentParseError`s naming the file, the field (`agent.menu[3].trigger`) and, when known, the line.
 */
import * as path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { checkSizes, TARGET_ATTRIBUTES, tidy } from './agent-parser';
import { AgentDefinitionSchema, commandTarget, type AgentCommand, type AgentDefinition, type CommandTarget, type CommandTargetKind } from './agent-schema';
import { activationRules, activationSteps, menuHandlers, type InstallerModels } from './agent-yaml-models';
import { AgentParseError, LimitExceededError, YamlSyntaxError } from './errors';
import { MAX_AGENT_CHARS } from './limits';
import { parseYamlSafe } from './safe-yaml';

/** The labels the installer gives the menu items it adds. */
export const HELP_COMMAND: AgentCommand = { cmd: '*help', description: 'Show numbered menu', targets: [] };
export const EXIT_COMMAND: AgentCommand = { cmd: '*exit', description: 'Exit with confirmation', targets: [] };

/** Item keys naming a target, with their kind: the XML parser's attributes, in its priority order for `target`. */
const TARGET_KEYS = TARGET_ATTRIBUTES;
const KIND_OF = new Map(TARGET_KEYS);
const PRIORITY: readonly CommandTargetKind[] = ['workflow', 'validate-workflow', 'exec', 'action', 'tmpl', 'data'];

/** Settings of `compileAgentYaml`. */
export interface CompileYamlOptions {
  /** The installer's templates of the source tree the agent sits in (`findInstallerModels`). */
  models?: InstallerModels;
}

type Path = (string | number)[];

/** Compiles the `*.agent.yaml` text of `file` (see the module comment). */
export function compileAgentYaml(text: string, file: string, options: CompileYamlOptions = {}): AgentDefinition {
  if (text.length > MAX_AGENT_CHARS) {
    throw new LimitExceededError(`Agent file ${file} is too large: ${text.length} characters`, 'MAX_AGENT_CHARS', MAX_AGENT_CHARS, { file });
  }
  let data: unknown;
  try {
    data = parseYamlSafe(text, file);
  } catch (error) {
    if (error instanceof YamlSyntaxError) {
      throw new AgentParseError(file, `invalid YAML: ${error.detail}`, error.line !== undefined ? { line: error.line } : {});
    }
    throw error;
  }
  return new YamlAgentReader(text, file).compile(data, options.models);
}

/** The agent id a `*.agent.yaml` file gives: its name without `.agent.yaml` / `.agent.yml`. */
export function yamlAgentId(file: string): string {
  return path.basename(file).replace(/\.agent\.ya?ml$/i, '');
}

/** The module folder of an agent file: the folder holding its `agents/` folder (else its own folder). */
export function moduleFolderName(file: string): string {
  const dir = path.dirname(file);
  return path.basename(path.basename(dir) === 'agents' ? path.dirname(dir) : dir);
}

class YamlAgentReader {
  private lines: { doc: ReturnType<typeof parseDocument>; counter: LineCounter } | undefined;

  constructor(
    private readonly text: string,
    private readonly file: string,
  ) {}

  compile(data: unknown, models: InstallerModels | undefined): AgentDefinition {
    const root = this.mapping(data, [], 'the file');
    const agent = this.mapping(root.agent, ['agent'], 'agent');
    const metadata = this.mapping(agent.metadata, ['agent', 'metadata'], 'agent.metadata');
    const persona = agent.persona === undefined || agent.persona === null ? {} : this.mapping(agent.persona, ['agent', 'persona']);
    const required = (key: 'name' | 'title') => {
      const value = this.string(metadata[key], ['agent', 'metadata', key]);
      if (value === undefined || value.trim() === '') this.fail(['agent', 'metadata', key], 'is missing');
      return value.trim();
    };
    const name = required('name');
    const title = required('title');
    const id = this.string(metadata.id, ['agent', 'metadata', 'id'])?.trim() || yamlAgentId(this.file);
    const icon = this.string(metadata.icon, ['agent', 'metadata', 'icon']);
    const module = this.string(metadata.module, ['agent', 'metadata', 'module'])?.trim() || moduleFolderName(this.file);

    const personaText = (key: string) => tidy(this.string(persona[key], ['agent', 'persona', key]) ?? '');
    const principles = this.principles(persona.principles);
    const actions = this.list(agent.critical_actions, ['agent', 'critical_actions']).map((value, i) => tidy(this.requiredString(value, ['agent', 'critical_actions', i])));
    const { commands, kinds } = this.menu(agent.menu);
    const prompts = this.list(agent.prompts, ['agent', 'prompts']).map((value, i) => {
      const at: Path = ['agent', 'prompts', i];
      const prompt = this.mapping(value, at);
      const promptId = this.string(prompt.id, [...at, 'id'])?.trim();
      if (!promptId) this.fail([...at, 'id'], 'is missing');
      return { id: promptId, text: tidy(this.string(prompt.content, [...at, 'content']) ?? '') };
    });

    const candidate = {
      id,
      name,
      title,
      ...(icon !== undefined && icon !== '' ? { icon } : {}),
      persona: {
        role: personaText('role'),
        identity: personaText('identity'),
        communication_style: personaText('communication_style'),
        principles,
      },
      criticalActions: activationSteps(models, module, actions).filter((a) => a !== ''),
      commands,
      prompts,
      menuHandlers: menuHandlers(models, kinds),
      rules: activationRules(models),
      dialect: 'yaml' as const,
      file: this.file,
    };
    checkSizes(candidate, this.file);
    const parsed = AgentDefinitionSchema.safeParse(candidate);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue.path.join('.');
      throw new AgentParseError(this.file, `invalid ${field || 'agent'}: ${issue.message}`, { field });
    }
    return parsed.data;
  }

  /** A text, or a list of texts joined with spaces (as the installer joins them). */
  private principles(value: unknown): string {
    const at: Path = ['agent', 'persona', 'principles'];
    if (Array.isArray(value)) return value.map((p, i) => tidy(this.requiredString(p, [...at, i]))).join(' ');
    return tidy(this.string(value, at) ?? '');
  }

  private menu(value: unknown): { commands: AgentCommand[]; kinds: CommandTargetKind[] } {
    const kinds: CommandTargetKind[] = [];
    const items: AgentCommand[] = this.list(value, ['agent', 'menu']).map((entry, i) => {
      const at: Path = ['agent', 'menu', i];
      const item = this.mapping(entry, at);
      const trigger = this.string(item.trigger, [...at, 'trigger'])?.trim();
      if (!trigger) this.fail([...at, 'trigger'], 'is missing');
      const targets: CommandTarget[] = [];
      for (const key of Object.keys(item)) {
        const kind = KIND_OF.get(key);
        if (kind === undefined) continue;
        targets.push(commandTarget(kind, this.requiredString(item[key], [...at, key])));
        if (!kinds.includes(kind)) kinds.push(kind);
      }
      targets.sort((a, b) => PRIORITY.indexOf(a.kind) - PRIORITY.indexOf(b.kind));
      const description = this.string(item.description, [...at, 'description']);
      if (targets.length === 0 && (description === undefined || description.trim() === '')) {
        this.fail(at, `has no target (${TARGET_KEYS.map(([k]) => k).join(', ')}) and no description`);
      }
      const checklist = this.string(item.checklist, [...at, 'checklist']);
      const document = this.string(item.document, [...at, 'document']);
      return {
        cmd: trigger.startsWith('*') ? trigger : `*${trigger}`,
        description: tidy(description ?? ''),
        ...(targets.length > 0 ? { target: targets[0] } : {}),
        targets,
        ...(checklist !== undefined ? { checklist } : {}),
        ...(document !== undefined ? { document } : {}),
      };
    });
    const has = (cmd: string) => items.some((c) => c.cmd === cmd);
    const commands = [...(has(HELP_COMMAND.cmd) ? [] : [{ ...HELP_COMMAND, targets: [] }]), ...items, ...(has(EXIT_COMMAND.cmd) ? [] : [{ ...EXIT_COMMAND, targets: [] }])];
    return { commands, kinds };
  }

  private mapping(value: unknown, at: Path, what = fieldName(at)): Record<string, unknown> {
    if (value === undefined || value === null) this.fail(at, at.length === 0 ? 'is empty' : 'is missing', what);
    if (typeof value !== 'object' || Array.isArray(value)) this.fail(at, `must be a mapping (got ${typeName(value)})`, what);
    return value as Record<string, unknown>;
  }

  /** A list; a missing or empty (`null`) value is an empty list. */
  private list(value: unknown, at: Path): unknown[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) this.fail(at, `must be a list (got ${typeName(value)})`);
    return value;
  }

  /** A text, or `undefined` when absent (`null` too: `key:` with no value). */
  private string(value: unknown, at: Path): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') this.fail(at, `must be a text (got ${typeName(value)})`);
    return value;
  }

  private requiredString(value: unknown, at: Path): string {
    const text = this.string(value, at);
    if (text === undefined) this.fail(at, 'is empty');
    return text;
  }

  private fail(at: Path, problem: string, what = fieldName(at)): never {
    const line = this.lineOf(at);
    const where = line === undefined ? '' : ` (line ${line})`;
    throw new AgentParseError(this.file, `${what} ${problem}${where}`, { field: fieldName(at), ...(line !== undefined ? { line } : {}) });
  }

  /** The line of the node at `at`, else of the nearest node above it that exists. */
  private lineOf(at: Path): number | undefined {
    // The text parsed already within the limits, so parsing it again for positions is safe.
    this.lines ??= (() => {
      const counter = new LineCounter();
      return { doc: parseDocument(this.text, { lineCounter: counter, uniqueKeys: false, logLevel: 'silent' }), counter };
    })();
    for (let n = at.length; n >= 0; n--) {
      const node = n === 0 ? this.lines.doc.contents : this.lines.doc.getIn(at.slice(0, n), true);
      const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
      if (range) return this.lines.counter.linePos(range[0]).line;
    }
    return undefined;
  }
}

/** `agent.menu[3].trigger` for `['agent', 'menu', 3, 'trigger']`. */
export function fieldName(at: Path): string {
  return at.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`)).join('') || 'file';
}

function typeName(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'nothing';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}
