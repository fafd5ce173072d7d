/**
 * The optional `bundle.yaml` manifest of a bundle folder: which agents it offers, where their
 * files are, and which one starts by default. Validated at the edge; errors name the bad field.
 */
import { z } from 'zod';
import { TOOL_PATTERN, TOOL_PATTERN_RULE } from '../common/tool-patterns';
import { commandRuleProblem } from '../common/commands/command-rules';
import { BundleError, BundleLoadError, SecurityViolationError, YamlSyntaxError } from './errors';
import { guardRead } from './sandbox/path-guard';
import { parseYamlSafe } from './safe-yaml';
import { readTextFile } from './text-content';

/** Largest `bundle.yaml` read (the YAML parser has its own, smaller limit). */
const MAX_MANIFEST_BYTES = 1024 * 1024;

/** One entry of an agent's `tools:` list: a tool name or a `*` pattern (see common/tool-patterns.ts). */
const ToolPatternSchema = z.string().regex(TOOL_PATTERN, { error: (issue) => `${TOOL_PATTERN_RULE}, got ${JSON.stringify(issue.input)}` });

/** One agent entry of the manifest. `file` is relative to the bundle root. */
export const ManifestAgentSchema = z.object({
  id: z.string().min(1),
  name: z.string().optional(),
  title: z.string().optional(),
  file: z.string().min(1),
  entry_point: z.boolean().optional(),
  description: z.string().optional(),
  /**
   * The agent's own allow-list: the tools its sessions offer the model, by name or pattern
   * (`read_file`, `github__*`). A session's own list (`SessionInput.tools`) replaces it.
   */
  tools: z.array(ToolPatternSchema).optional(),
  /**
   * The agents this one may hand tasks to (`delegate_task`), by id or `*` pattern; default every
   * other agent of the bundle. A session's own list (`SessionInput.delegation.agents`) replaces it.
   */
  delegates: z
    .array(z.string().regex(/^[A-Za-z0-9_.*/-]{1,200}$/, { error: (issue) => `an agent id or pattern takes letters, digits, _, -, ., / and *, got ${JSON.stringify(issue.input)}` }))
    .optional(),
});
export type ManifestAgent = z.infer<typeof ManifestAgentSchema>;

/** One command rule (common/commands/command-rules.ts). */
const CommandRuleSchema = z.string().check((ctx) => {
  const bad = commandRuleProblem(ctx.value);
  if (bad !== undefined) ctx.issues.push({ code: 'custom', message: bad, input: ctx.value });
});

/**
 * The bundle's command rules, for sessions with commands on: `deny` refuses a command without
 * asking; `allow` is a request the approval shows, never a grant (a bundle may come from someone
 * else: only the user's own settings and the worker's let a command run without a yes).
 */
export const ManifestCommandsSchema = z.strictObject({
  allow: z.array(CommandRuleSchema).optional(),
  deny: z.array(CommandRuleSchema).optional(),
});

/** The manifest; unknown top-level keys are allowed (bundles may carry their own metadata). */
export const BundleManifestSchema = z.looseObject({
  name: z.string().optional(),
  version: z.union([z.string(), z.number()]).optional(),
  description: z.string().optional(),
  agents: z.array(ManifestAgentSchema).min(1),
  commands: ManifestCommandsSchema.optional(),
});
export type BundleManifest = z.infer<typeof BundleManifestSchema>;

/**
 * Parses and validates manifest text; `BundleLoadError` names the file and the first bad field,
 * `LimitExceededError` the file and the limit it exceeds (see `safe-yaml.ts`).
 */
export function parseManifest(text: string, file: string): BundleManifest {
  let raw: unknown;
  try {
    raw = parseYamlSafe(text, file);
  } catch (error) {
    if (!(error instanceof YamlSyntaxError)) throw error;
    throw new BundleLoadError(`Invalid bundle manifest ${file}: ${error.detail}`, { file, cause: error });
  }
  const parsed = BundleManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join('.');
    throw new BundleLoadError(`Invalid bundle manifest ${file}: ${field || 'manifest'}: ${issue.message}`, { file, field });
  }
  return parsed.data;
}

/** Reads `bundle.yaml` as a regular text file inside the bundle `root` (not a symlink out, not a FIFO). */
export async function readManifestFile(file: string, root: string): Promise<string> {
  try {
    const real = await guardRead(file, [root]);
    return (await readTextFile(real, MAX_MANIFEST_BYTES, undefined, { allowHardLinks: true })).content;
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    const reason = error instanceof SecurityViolationError ? 'leaves the bundle folder (through a symlink)' : error.message;
    throw new BundleLoadError(`Invalid bundle manifest ${file}: ${reason}`, { file, cause: error });
  }
}
