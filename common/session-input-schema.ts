/**
 * The session workflow's input, checked when a run starts: a missing or mistyped field ends the
 * session at once with a `LoopwrightBadInput` failure naming the field, instead of failing somewhere
 * later with a JavaScript error. Pure: used inside the workflow sandbox and by clients.
 */
import { z } from 'zod';
import type { SessionInput } from './session-types';

const duration = z.union([z.string().trim().min(1), z.number().positive()]);

const schema = z.object({
  bundlePath: z.string().trim().min(1),
  agentId: z.string(),
  firstMessage: z.string().optional(),
  oneShot: z.boolean().optional(),
  maxIterations: z.number().int().positive().optional(),
  model: z.string().trim().min(1).optional(),
  outputRoots: z.array(z.string().trim().min(1)).optional(),
  projectRoot: z.string().trim().min(1).optional(),
  idleTimeout: duration.optional(),
  timeouts: z
    .object({ modelCall: duration.optional(), modelHeartbeat: duration.optional(), tool: duration.optional() })
    .strict()
    .optional(),
  approval: z
    .object({
      policy: z.union([z.enum(['none', 'writes', 'all']), z.array(z.string().min(1))]).optional(),
      timeout: duration.optional(),
      onTimeout: z.enum(['approve', 'deny']).optional(),
    })
    .strict()
    .optional(),
  loopBreakers: z.boolean().optional(),
  iterationWarning: z.number().min(0).max(1).optional(),
  maxRepeatedFailures: z.number().int().min(1).optional(),
  continueAsNew: z
    .object({ maxHistoryBytes: z.number().int().positive().optional(), maxHistoryEvents: z.number().int().positive().optional() })
    .strict()
    .optional(),
  // Written by the session itself when it continues as new; checked by its hash on arrival.
  continued: z.object({ fromRunId: z.string(), run: z.number().int().positive() }).loose().optional(),
});

/** The first problem with `input`, as `field: what is wrong`, or undefined when it is a valid SessionInput. */
export function sessionInputProblem(input: unknown): string | undefined {
  if (input === null || typeof input !== 'object') return `the session input must be an object, got ${input === null ? 'null' : typeof input}`;
  const parsed = schema.safeParse(input);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.join('.') : 'input';
  return `${field}: ${issue.message}`;
}

/** Type guard over {@link sessionInputProblem}. */
export function isSessionInput(input: unknown): input is SessionInput {
  return sessionInputProblem(input) === undefined;
}
