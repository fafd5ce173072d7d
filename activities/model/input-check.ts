/**
 * Checks of the model activities' inputs. A malformed input is a bug in the caller (the workflow),
 * so it fails at once, non-retryable, naming the field. The model settings are checked by the
 * session's settings table (common/settings/session-settings.ts), the rules the workflow checked
 * them by when the session started, letting through fields a newer workflow may send.
 */
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { MODEL_BAD_REQUEST, type ModelFailureDetails, type ModelSettings } from '../../common/model-call';
import { objectOf } from '../../common/settings/kinds';
import { isGroup } from '../../common/settings/setting';
import { SESSION_SETTINGS } from '../../common/settings/session-settings';

const messageSchema = z.object({ role: z.enum(['system', 'user', 'assistant', 'tool']) }).loose();

const modelSettingsGroup = SESSION_SETTINGS.modelSettings.kind;
if (!isGroup(modelSettingsGroup)) throw new Error('modelSettings is not a group of settings');
const modelSettings = objectOf<ModelSettings>('object', modelSettingsGroup.fields, false);

/** `ModelSettings`, by the settings table's rules; a problem is an issue at its field (`settings.temperature`). */
export const settingsSchema = z.custom<ModelSettings>().superRefine((value, ctx) => {
  const found = modelSettings.check(value);
  if (found) ctx.addIssue({ code: 'custom', message: found.reason, path: found.at === '' ? [] : found.at.split('.') });
});

export const viewSchema = z
  .object({
    head: z.number().int().min(0),
    from: z.number().int().min(0),
    summary: z.string().optional(),
    pruneBefore: z.number().int().min(0),
    omit: z.array(z.object({ from: z.number().int().min(0), to: z.number().int().min(0) })).optional(),
    prunedAlso: z.array(z.number().int().min(0)).optional(),
    keep: z.array(z.number().int().min(0)).optional(),
  })
  .loose();

export const transcriptRefSchema = z.object({
  workflowId: z.string().min(1),
  runId: z.string().min(1),
  count: z.number().int().min(1, 'at least one message is needed'),
  hash: z.string().min(1),
  gap: z.object({ from: z.number().int().min(0), to: z.number().int().min(1), hash: z.string().min(1) }).optional(),
});

export const deltaSchema = z.object({ from: z.number().int().min(0), messages: z.array(z.object({ role: z.string() }).loose()) });

const optionsSchema = z.object({
  tools: z.array(z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }).loose() })),
  model: z.string().trim().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().positive().optional(),
  settings: settingsSchema.optional(),
  view: viewSchema.optional(),
  extra: z.array(messageSchema).optional(),
});

export const inputSchema = optionsSchema.extend({
  messages: z.array(messageSchema).min(1, 'at least one message is needed'),
});

export const refInputSchema = optionsSchema.extend({
  tools: optionsSchema.shape.tools.optional(),
  toolsKey: z.string().min(1).optional(),
  transcript: transcriptRefSchema,
  delta: deltaSchema.optional(),
  inline: z
    .object({
      tools: z.array(z.string()),
      context: z
        .object({ bundleRoot: z.string().min(1) })
        .loose()
        .optional(),
    })
    .optional(),
});

export const summarizeInputSchema = z.object({
  transcript: transcriptRefSchema,
  delta: deltaSchema.optional(),
  view: viewSchema,
  upTo: z.number().int().min(0),
  model: z.string().trim().min(1).optional(),
  settings: settingsSchema.optional(),
  maxSummaryTokens: z.number().int().positive(),
});

const pathSchema = z.string().trim().min(1);

/** The runtime context fields the verify activity reads (the rest passes unchecked). */
const verifyContextSchema = z
  .object({
    bundleRoot: z.string().min(1),
    variables: z.record(z.string(), z.string()),
    readRoots: z.array(z.string()),
    maxReadBytes: z.number().int().positive(),
    allowSecretFiles: z.boolean().optional(),
    secretFiles: z.array(z.object({ pattern: z.string(), source: z.string() })).optional(),
    allowHardLinks: z.boolean().optional(),
  })
  .loose();

export const verifyInputSchema = z.object({
  target: z.object({
    checklist: pathSchema.optional(),
    document: pathSchema.optional(),
    workflow: pathSchema.optional(),
    name: z.string().optional(),
    source: z.enum(['workflow', 'command']),
  }),
  context: verifyContextSchema,
  model: z.string().trim().min(1).optional(),
  settings: settingsSchema.optional(),
  attempt: z.number().int().min(1),
});

/** Throw a non-retryable ModelBadRequest naming the first problem when `input` does not fit `schema`. */
export function checkInput(schema: z.ZodType, input: unknown, what = 'model call'): void {
  const parsed = schema.safeParse(input);
  if (parsed.success) return;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? issue.path.join('.') : 'input';
  throw badRequest(`Invalid ${what} input: ${where}: ${issue.message}`);
}

/** A non-retryable ModelBadRequest failure. */
export function badRequest(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: MODEL_BAD_REQUEST, message, nonRetryable: true, details: [noDetails()] });
}

/** Failure details when there was no HTTP response. */
export function noDetails(): ModelFailureDetails {
  return { status: null, providerType: null, providerCode: null, requestId: null, retryAfterMs: null };
}
