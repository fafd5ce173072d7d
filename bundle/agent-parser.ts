/**
 * Parses an agent file of either real BMAD dialect into an `AgentDefinition`.
 *
 * Source dialect (BMAD v6 alpha.0, the execution spec's): markdown with an `<agent id name title
 * icon>` element holding `<persona>`, `<critical-actions>` of `<i>` items and `<cmds>` of
 * `<c cmd run-workflow|exec|action|validate-workflow|data|tmpl>` commands, and optionally `<prompts>`.
 *
 * Compiled dialect (BMAD v6 alpha.5 installs): YAML front matter, then an `<agent>` whose
 * `<activation>` lists `<step>`s, `<menu-handlers>` and `<rules>`, then `<persona>`, `<menu>` of
 * `<item cmd workflow|exec|action|validate-workflow|data|tmpl>`, and optionally `<prompts>`.
 *
 * Decisions, where the real files leave room:
 * - The XML may stand bare or sit in a ```xml fence; the first `<agent` start tag is read and
 *   everything after its closing tag is ignored (markdown headings, the closing fence).
 * - Critical actions are the activation steps (compiled `<step>`, or `<steps><s>` in the web
 *   orchestrator) followed by the `<critical-actions>` items, all in document order. Every step is
 *   kept, including "Load persona from this current agent file": it is a harmless instruction,
 *   and which steps matter is for `critical-actions.ts` to decide from the text, not the parser.
 * - The dialect is `compiled` when the file has front matter or the agent a `<menu>`; `source`
 *   otherwise. Both command containers are read whatever the dialect.
 * - `principles` may be text or `<p>` children (then joined as `- ` lines); `<core_principles>` is
 *   accepted for `<principles>`. A missing persona part is an empty string.
 * - A missing `id` falls back to the file name without extension; a missing `name`, `title` or
 *   command `cmd` is an error. `<command-resolution>` and `<execution-rules>` are not read.
 * - Multi-line text keeps its lines, with the common indentation removed.
 * - `checklist="..."` and `document="..."` of an item are kept as written (v6 sources have them on
 *   validate-workflow items; the installer drops them, so compiled files rarely do).
 *
 * `*.agent.yaml` files (BMAD v6 sources) are compiled by `agent-yaml.ts` instead; `agent-file.ts`
 * picks the parser by file name.
 *
 * Limits (`limits.ts`, each a `LimitExceededError` naming the file and the limit): the file's
 * length, the XML's depth and element count, each text's length and the number of critical actions.
 */
import * as path from 'node:path';
import { AgentDefinitionSchema, type AgentCommand, type AgentDefinition, type CommandTarget, type CommandTargetKind, commandTarget } from './agent-schema';
import { AgentParseError, LimitExceededError } from './errors';
import { MAX_AGENT_CHARS, MAX_AGENT_TEXT_CHARS, MAX_CRITICAL_ACTIONS } from './limits';
import { childElements, firstChild, readElement, textOf, XmlLimitError, XmlSyntaxError, type XmlElement } from './xml-reader';

/** Command attributes in priority order (the first present is the command's primary target). */
export const TARGET_ATTRIBUTES: readonly [string, CommandTargetKind][] = [
  ['run-workflow', 'workflow'],
  ['workflow', 'workflow'],
  ['validate-workflow', 'validate-workflow'],
  ['exec', 'exec'],
  ['action', 'action'],
  ['tmpl', 'tmpl'],
  ['data', 'data'],
];

/**
 * Parses `text` (the content of the agent file `file`) and validates the result. Throws
 * `AgentParseError` naming the file and the problem: no `<agent>` element, an unclosed or
 * mismatched tag (with its line), a missing `name`, `title` or `cmd` attribute.
 */
export function parseAgent(text: string, file: string): AgentDefinition {
  if (text.length > MAX_AGENT_CHARS) {
    throw new LimitExceededError(`Agent file ${file} is too large: ${text.length} characters`, 'MAX_AGENT_CHARS', MAX_AGENT_CHARS, { file });
  }
  const start = findAgentStart(text);
  if (start === -1) throw new AgentParseError(file, 'missing <agent> element');
  let agent: XmlElement;
  try {
    agent = readElement(text, start);
  } catch (error) {
    if (error instanceof XmlLimitError) {
      throw new LimitExceededError(`Agent file ${file} has ${error.problem} (line ${error.line})`, error.limit, error.max, {
        file,
        line: error.line,
      });
    }
    if (error instanceof XmlSyntaxError) throw new AgentParseError(file, error.message, { line: error.line });
    throw error;
  }

  const attr = (name: 'name' | 'title') => {
    const value = agent.attrs[name]?.trim();
    if (!value) throw new AgentParseError(file, `<agent> (line ${agent.line}) has no ${name} attribute`, { line: agent.line, field: name });
    return value;
  };

  const candidate = {
    id: agent.attrs.id?.trim() || path.basename(file, path.extname(file)),
    name: attr('name'),
    title: attr('title'),
    ...(agent.attrs.icon ? { icon: agent.attrs.icon } : {}),
    persona: readPersona(firstChild(agent, 'persona')),
    criticalActions: readCriticalActions(agent),
    commands: readCommands(agent, file),
    prompts: childElements(firstChild(agent, 'prompts') ?? emptyElement(), 'prompt').map((p) => ({
      id: p.attrs.id ?? '',
      text: tidy(textOf(p)),
    })),
    menuHandlers: readMenuHandlers(agent),
    rules: readRules(firstChild(agent, 'activation')),
    dialect: hasFrontMatter(text) || firstChild(agent, 'menu') ? 'compiled' : 'source',
    file,
  };

  checkSizes(candidate, file);
  const parsed = AgentDefinitionSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join('.');
    throw new AgentParseError(file, `invalid ${field || 'agent'}: ${issue.message}`, { field });
  }
  return parsed.data;
}

/**
 * Every text of the agent (persona parts, actions, prompts, rules, commands) within
 * `MAX_AGENT_TEXT_CHARS`, and at most `MAX_CRITICAL_ACTIONS` actions. Shared with `agent-yaml.ts`.
 */
export function checkSizes(agent: Omit<AgentDefinition, 'dialect'>, file: string): void {
  if (agent.criticalActions.length > MAX_CRITICAL_ACTIONS) {
    throw new LimitExceededError(`Agent file ${file} has ${agent.criticalActions.length} critical actions`, 'MAX_CRITICAL_ACTIONS', MAX_CRITICAL_ACTIONS, { file, field: 'criticalActions' });
  }
  const texts: [string, string][] = [
    ...Object.entries(agent.persona).map(([part, text]): [string, string] => [`persona.${part}`, text]),
    ...agent.criticalActions.map((text, i): [string, string] => [`criticalActions[${i}]`, text]),
    ...agent.prompts.map((p, i): [string, string] => [`prompts[${i}]`, p.text]),
    ...agent.rules.map((text, i): [string, string] => [`rules[${i}]`, text]),
    ...agent.menuHandlers.map((h, i): [string, string] => [`menuHandlers[${i}]`, h.text]),
    ...agent.commands.flatMap((c, i): [string, string][] => [
      [`commands[${i}].description`, c.description],
      ...c.targets.map((t): [string, string] => [`commands[${i}].${t.kind}`, t.value]),
      ...(c.checklist !== undefined ? [[`commands[${i}].checklist`, c.checklist] as [string, string]] : []),
      ...(c.document !== undefined ? [[`commands[${i}].document`, c.document] as [string, string]] : []),
    ]),
  ];
  for (const [field, text] of texts) {
    if (text.length > MAX_AGENT_TEXT_CHARS) {
      throw new LimitExceededError(`Agent file ${file}: ${field} is too long: ${text.length} characters`, 'MAX_AGENT_TEXT_CHARS', MAX_AGENT_TEXT_CHARS, {
        file,
        field,
      });
    }
  }
}

/** Offset of the first `<agent` start tag (not `<agents>` or `<agent-x>`), or -1. */
function findAgentStart(text: string): number {
  const match = /<agent(?=[\s>/])/.exec(text);
  return match ? match.index : -1;
}

function hasFrontMatter(text: string): boolean {
  return /^\uFEFF?---\r?\n/.test(text);
}

function emptyElement(): XmlElement {
  return { name: '', attrs: {}, children: [], line: 0 };
}

function readPersona(persona: XmlElement | undefined) {
  const part = (...names: string[]) => {
    const el = persona && firstChild(persona, ...names);
    if (!el) return '';
    const points = childElements(el, 'p');
    if (points.length > 0) return points.map((p) => `- ${tidy(textOf(p))}`).join('\n');
    return tidy(textOf(el));
  };
  return {
    role: part('role'),
    identity: part('identity'),
    communication_style: part('communication_style'),
    principles: part('principles', 'core_principles'),
  };
}

function readCriticalActions(agent: XmlElement): string[] {
  const actions: string[] = [];
  const activation = firstChild(agent, 'activation');
  if (activation) {
    for (const el of childElements(activation, 'step', 'steps')) {
      const steps = el.name === 'steps' ? childElements(el, 's', 'step') : [el];
      for (const step of steps) actions.push(tidy(textOf(step)));
    }
  }
  for (const block of childElements(agent, 'critical-actions')) {
    for (const item of childElements(block, 'i')) actions.push(tidy(textOf(item)));
  }
  return actions.filter((a) => a !== '');
}

function readCommands(agent: XmlElement, file: string): AgentCommand[] {
  const commands: AgentCommand[] = [];
  for (const container of childElements(agent, 'cmds', 'menu')) {
    for (const item of childElements(container, 'c', 'item')) {
      const cmd = item.attrs.cmd?.trim();
      if (!cmd) {
        throw new AgentParseError(file, `<${item.name}> (line ${item.line}) has no cmd attribute`, {
          line: item.line,
          field: `commands[${commands.length}].cmd`,
        });
      }
      const targets: CommandTarget[] = [];
      for (const [attribute, kind] of TARGET_ATTRIBUTES) {
        const value = item.attrs[attribute];
        if (value !== undefined) targets.push(commandTarget(kind, value));
      }
      const { checklist, document } = item.attrs;
      commands.push({
        cmd,
        description: tidy(textOf(item)),
        ...(targets.length > 0 ? { target: targets[0] } : {}),
        targets,
        ...(checklist !== undefined ? { checklist } : {}),
        ...(document !== undefined ? { document } : {}),
      });
    }
  }
  return commands;
}

function readMenuHandlers(agent: XmlElement): { type: string; text: string }[] {
  const activation = firstChild(agent, 'activation');
  const container = (activation && firstChild(activation, 'menu-handlers')) ?? firstChild(agent, 'menu-handlers');
  if (!container) return [];
  const holders = [container, ...childElements(container, 'handlers')];
  return holders.flatMap((h) => childElements(h, 'handler')).map((h) => ({ type: h.attrs.type ?? '', text: tidy(textOf(h)) }));
}

function readRules(activation: XmlElement | undefined): string[] {
  const rules = activation && firstChild(activation, 'rules');
  return rules ? ruleLines(rules) : [];
}

/** The rules of a `<rules>` element: its `<r>` items, else one per text line without its `- ` marker. */
export function ruleLines(rules: XmlElement): string[] {
  const items = childElements(rules, 'r');
  if (items.length > 0) return items.map((r) => tidy(textOf(r))).filter((r) => r !== '');
  return textOf(rules)
    .split('\n')
    .map((line) => line.trim().replace(/^[-*]\s+/, ''))
    .filter((line) => line !== '');
}

/**
 * Normalises element text: the first line trimmed, the common indentation of the other lines
 * removed, trailing spaces and blank edge lines dropped. Keeps line structure (lists in steps).
 */
export function tidy(text: string): string {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.trimEnd());
  let startsOnNewLine = false;
  while (lines.length > 0 && lines[0].trim() === '') {
    lines.shift();
    startsOnNewLine = true;
  }
  while (lines.length > 0 && lines[lines.length - 1].trim() === '') lines.pop();
  if (lines.length === 0) return '';
  // Text that starts on the tag's own line has no meaningful indentation on its first line.
  const measured = startsOnNewLine ? lines : lines.slice(1);
  // A loop, not `Math.min(...indents)`: spreading 100,000 lines overflows the stack.
  let cut = Infinity;
  for (const l of measured) if (l.trim() !== '') cut = Math.min(cut, l.length - l.trimStart().length);
  if (cut === Infinity) cut = 0;
  return lines.map((l, i) => (i === 0 && !startsOnNewLine ? l.trim() : l.slice(cut))).join('\n');
}
