/**
 * Routes that only read: health, what a bundle or project offers (agents with their menus, skills),
 * batches and schedules, and the OpenAPI description.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { BATCH_WORKFLOW } from '../../common/batch-types';
import { inspectBundle, listProject } from '../../bundle/inspect';
import { ApiError } from '../api-error';
import { errorResponses, idParams, looseObject } from '../schemas';
import type { ServeContext } from '../serve-context';

/** Agents inspected at once for their menus. */
const INSPECT_CONCURRENCY = 4;

/** What `GET /api/agents` lists for one agent. */
export interface AgentListing {
  id: string;
  name: string;
  title: string;
  icon?: string;
  menu: { cmd: string; description: string }[];
  /** Why its menu could not be read, when it could not. */
  warning?: string;
}

export function registerReadRoutes(app: FastifyInstance, context: ServeContext): void {
  app.get(
    '/api/health',
    {
      schema: {
        tags: ['server'],
        summary: 'The server runs; where its Temporal server is',
        response: {
          200: {
            type: 'object',
            required: ['ok', 'temporal', 'taskQueue'],
            properties: {
              ok: { type: 'boolean' },
              temporal: { type: 'object', required: ['address', 'namespace'], properties: { address: { type: 'string' }, namespace: { type: 'string' } } },
              taskQueue: { type: 'string' },
              exampleBundle: { type: 'string', description: "The example bundle's folder, to offer" },
              scriptedModel: { type: 'boolean', description: "Sessions run on Loopwright's scripted model (no model is configured)" },
            },
          },
        },
      },
    },
    async () => ({
      ok: true,
      temporal: { address: context.temporal.address, namespace: context.temporal.namespace },
      taskQueue: context.taskQueue,
      ...(context.exampleBundle !== undefined ? { exampleBundle: context.exampleBundle } : {}),
      scriptedModel: context.scriptedModel === true,
    }),
  );

  app.get<{ Querystring: { bundlePath: string } }>(
    '/api/agents',
    {
      schema: {
        tags: ['bundles'],
        summary: 'The agents (with their menus) and skills of a bundle or project',
        querystring: { type: 'object', required: ['bundlePath'], properties: { bundlePath: { type: 'string', minLength: 1, maxLength: 4096 } } },
        response: {
          200: {
            type: 'object',
            required: ['bundlePath', 'projectRoot', 'agents', 'skills'],
            properties: {
              bundlePath: { type: 'string' },
              projectRoot: { type: 'string' },
              agents: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['id', 'name', 'title', 'menu'],
                  properties: {
                    id: { type: 'string' },
                    name: { type: 'string' },
                    title: { type: 'string' },
                    icon: { type: 'string' },
                    menu: { type: 'array', items: { type: 'object', properties: { cmd: { type: 'string' }, description: { type: 'string' } } } },
                    warning: { type: 'string' },
                  },
                },
              },
              skills: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, description: { type: 'string' }, hidden: { type: 'boolean' } } } },
            },
          },
          ...errorResponses(400),
        },
      },
    },
    async (request) => {
      const { bundlePath } = request.query;
      if (!path.isAbsolute(bundlePath)) throw new ApiError(400, 'BadRequest', 'bundlePath must be an absolute path', 'bundlePath');
      const listing = await listProject(bundlePath);
      const agents = await mapLimited(listing.agents, INSPECT_CONCURRENCY, async (agent): Promise<AgentListing> => {
        try {
          const inspected = await inspectBundle(bundlePath, agent.id);
          const a = inspected.agent;
          return { id: agent.id, name: a.name, title: a.title, ...(a.icon ? { icon: a.icon } : {}), menu: inspected.commands.map((c) => ({ cmd: c.cmd, description: c.description })) };
        } catch (err) {
          return { id: agent.id, name: agent.name ?? agent.id, title: agent.title ?? '', menu: [], warning: err instanceof Error ? err.message : String(err) };
        }
      });
      return {
        bundlePath: path.resolve(bundlePath),
        projectRoot: await projectRootFor(context, bundlePath, listing.projectRoot),
        agents,
        skills: listing.skills.map((s) => ({ name: s.name, description: s.description, ...(s.hidden ? { hidden: true } : {}) })),
      };
    },
  );

  app.get(
    '/api/batches',
    {
      schema: {
        tags: ['batches'],
        summary: 'Batches, newest first (at most 100)',
        response: {
          200: {
            type: 'object',
            required: ['batches'],
            properties: {
              batches: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, status: { type: 'string' }, startTime: { type: 'string', format: 'date-time' } } } },
            },
          },
        },
      },
    },
    async () => {
      const batches: { id: string; status: string; startTime: string }[] = [];
      const query = `WorkflowType = '${BATCH_WORKFLOW}' AND ExecutionStatus != 'ContinuedAsNew'`;
      for await (const execution of context.client.workflow.list({ query })) {
        batches.push({ id: execution.workflowId, status: execution.status.name, startTime: execution.startTime.toISOString() });
        if (batches.length >= 100) break;
      }
      return { batches };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/batches/:id',
    { schema: { tags: ['batches'], summary: "A batch's state (items, started, ok, failed, …)", params: idParams, response: { 200: looseObject('BatchState'), ...errorResponses(404) } } },
    async (request) => context.loopwright.batch(request.params.id).state(),
  );

  app.get(
    '/api/schedules',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Schedules of one-shot sessions',
        response: { 200: { type: 'object', required: ['schedules'], properties: { schedules: { type: 'array', items: looseObject('ScheduleLine') } } } },
      },
    },
    async () => ({ schedules: await context.loopwright.schedules.list() }),
  );
}

/** `fn` over `items`, at most `limit` at a time, results in order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  });
  await Promise.all(lanes);
  return results;
}

/**
 * The project a bundle's sessions work in: its own, except for the example bundle, whose sessions
 * work in the example project (as `loopwright demo`'s do) instead of writing into the package.
 */
async function projectRootFor(context: ServeContext, bundlePath: string, own: string): Promise<string> {
  const { exampleBundle, exampleProject } = context;
  if (exampleBundle === undefined || exampleProject === undefined) return own;
  const real = (p: string) => fs.promises.realpath(p).catch(() => path.resolve(p));
  if ((await real(bundlePath)) !== (await real(exampleBundle))) return own;
  await fs.promises.mkdir(exampleProject, { recursive: true });
  return real(exampleProject);
}
