/**
 * The optional `bundle.yaml` manifest of a bundle folder: which agents it offers, where their
 * files are, and which one starts by default. Validated at the edge; errors name the bad field.
 */
import { z } from 'zod';
import { BundleLoadError, YamlSyntaxError } from './errors';
import { parseYamlSafe } from './safe-yaml';

/** One agent entry of the manifest. `file` is relative to the bundle root. */
export const ManifestAgentSchema = z.object({
  id: z.string().min(1),
  name: z.string().optional(),
  title: z.string().optional(),
  file: z.string().min(1),
  entry_point: z.boolean().optional(),
  description: z.string().optional(),
});
export type ManifestAgent = z.infer<typeof ManifestAgentSchema>;

/** The manifest; unknown top-level keys are allowed (bundles may carry their own metadata). */
export const BundleManifestSchema = z.looseObject({
  name: z.string().optional(),
  version: z.union([z.string(), z.number()]).optional(),
  description: z.string().optional(),
  agents: z.array(ManifestAgentSchema).min(1),
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
