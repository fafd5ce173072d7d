/**
 * The eval routes: list the evals, read one (its counters while it runs; its summary and report,
 * as the eval wrote it, once it completed), read one case with the recording's and the
 * candidate's transcripts side by side and the differences to mark (client/eval-reader.ts), and
 * start an eval of recorded sessions on this server against another model.
 *
 * Starting takes session workflow ids only, never a file or folder: a client cannot make the
 * server read a file it names. The eval runs on the serve process's task queue; its scratch copies
 * and report go to the system's temporary folder on the machine whose worker takes it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { DivergenceRule, UnrecordedApprovalRule } from '../../common/eval/eval-script';
import { parseRule, ThresholdError, type ThresholdRule } from '../../common/eval/thresholds';
import { startEval } from '../../client/eval-client';
import { EvalNotFoundError, EvalReportUnavailableError, listEvals, readEval, readEvalCase } from '../../client/eval-reader';
import { ApiError } from '../api-error';
import { evalCaseSchema, evalListSchema, evalOverviewSchema, failOnQuery, startEvalBody } from '../eval-schemas';
import { errorResponses } from '../schemas';
import { type ServeContext, webUiUrl } from '../serve-context';

const evalParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 1000, description: 'Workflow id of the eval' } } };

/** The body of `POST /api/evals`. */
interface StartEvalBody {
  sessions: string[];
  model?: string;
  maxIterations?: number;
  onDivergence?: DivergenceRule;
  approveUnrecorded?: UnrecordedApprovalRule;
  concurrency?: number;
  workflowId?: string;
}

export function registerEvalRoutes(app: FastifyInstance, context: ServeContext): void {
  const tags = ['evals'];

  app.get('/api/evals', { schema: { tags, summary: 'Evals, newest first (at most 100)', response: { 200: evalListSchema } } }, async () => ({ evals: await listEvals(context.client) }));

  app.get<{ Params: { id: string }; Querystring: { failOn?: string } }>(
    '/api/evals/:id',
    {
      schema: {
        tags,
        summary: "An eval: its counters while it runs; its summary and report (every case's scores per turn, beside the recording's) once it completed",
        params: evalParams,
        querystring: failOnQuery,
        response: { 200: evalOverviewSchema, ...errorResponses(400, 404) },
      },
    },
    async (request) => {
      const rules = parsedRules(request.query.failOn);
      const overview = await lookup(() => readEval(context.client, request.params.id, rules));
      const link = webUiUrl(context, overview.id);
      return { ...overview, ...(link ? { webUiUrl: link } : {}) };
    },
  );

  app.get<{ Params: { id: string; index: number } }>(
    '/api/evals/:id/cases/:index',
    {
      schema: {
        tags,
        summary: "One recorded session of an eval: per turn its scores, the recording's and the candidate's transcripts side by side, and the differences to mark",
        params: { ...evalParams, required: ['id', 'index'], properties: { ...evalParams.properties, index: { type: 'integer', minimum: 0, description: 'The case (0-based, as in the report)' } } },
        response: { 200: evalCaseSchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => lookup(() => readEvalCase(context.client, request.params.id, request.params.index)),
  );

  app.post<{ Body: StartEvalBody }>(
    '/api/evals',
    {
      schema: {
        tags,
        summary: 'Start an eval of recorded sessions on this server against another model',
        body: startEvalBody,
        response: { 201: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } }, ...errorResponses(400, 409) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      // Refused rather than dropped: a client that sends a bundle or project to try learns it is not taken here.
      const known = Object.keys((startEvalBody as { properties: object }).properties);
      for (const name of Object.keys(body))
        if (!known.includes(name)) throw new ApiError(400, 'BadRequest', `unknown field ${name} (an eval started here changes the model only: loopwright eval takes more)`, name);
      body.sessions.forEach((id, i) => {
        // startEval reads a source that names a file or folder as one: only session ids are taken here.
        if (/[/\\]/.test(id) || id.endsWith('.json') || fs.existsSync(path.resolve(id))) {
          throw new ApiError(400, 'BadRequest', `sessions[${i}] ${JSON.stringify(id)} is not a session id (a workflow id; files are not taken here)`, 'sessions');
        }
      });
      if (body.workflowId !== undefined) {
        const existing = await context.client.workflow
          .getHandle(body.workflowId)
          .describe()
          .catch(() => undefined);
        if (existing) throw new ApiError(409, 'AlreadyExists', `A workflow ${body.workflowId} already exists`);
      }
      const handle = await startEval(context.loopwright, {
        sources: body.sessions,
        candidate: { ...(body.model ? { model: body.model } : {}), ...(body.maxIterations ? { maxIterations: body.maxIterations } : {}) },
        replay: { ...(body.onDivergence ? { onDivergence: body.onDivergence } : {}), ...(body.approveUnrecorded ? { approvals: body.approveUnrecorded } : {}) },
        ...(body.concurrency ? { concurrency: body.concurrency } : {}),
        ...(body.workflowId ? { workflowId: body.workflowId } : {}),
      });
      return reply.code(201).send({ id: handle.workflowId });
    },
  );
}

function parsedRules(text: string | undefined): ThresholdRule[] {
  try {
    return (text ?? '')
      .split(',')
      .filter((t) => t.trim() !== '')
      .map(parseRule);
  } catch (err) {
    if (err instanceof ThresholdError) throw new ApiError(400, 'BadRequest', `failOn: ${err.message}`, 'failOn');
    throw err;
  }
}

/** The reader's answer, its typed refusals as API errors (an unknown eval or case 404, no report yet 409). */
async function lookup<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof EvalNotFoundError) throw new ApiError(404, 'NotFound', err.message);
    if (err instanceof EvalReportUnavailableError) throw new ApiError(409, 'Conflict', err.message);
    throw err;
  }
}
