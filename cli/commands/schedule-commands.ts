/**
 * `loopwright schedule create | list | pause | unpause | trigger | delete`: schedules of one-shot
 * sessions on Temporal Schedules (client/schedule-client.ts). A scheduled session runs on a
 * long-lived worker (`loopwright worker`); its outputs and status are kept like any session's.
 */
import { msToNumber } from '@temporalio/common/lib/time';
import { EXIT } from '../exit-codes';
import { hasLongLivedWorker } from '../in-process-worker';
import { type CommandOutput, UsageError } from '../output';
import type { ScheduleLine } from '../../client/schedule-client';
import type { TemporalSession } from '../temporal-session';
import { type JsonOption, withSession } from './command-support';
import { checkBundleLocally, type RunOptions, sandboxSettings } from './session-commands';
import { modelSessionSettings } from './session-settings';
import { toolSessionSettings } from './tool-settings';

/** Options of `loopwright schedule create`. */
export interface ScheduleCreateOptions extends Omit<RunOptions, 'once' | 'detach' | 'id'> {
  every?: string;
  cron?: string;
  paused?: boolean;
}

export async function scheduleCreateCommand(name: string, bundlePath: string, agentId: string, message: string, options: ScheduleCreateOptions, out: CommandOutput): Promise<number> {
  if ((options.every === undefined) === (options.cron === undefined)) throw new UsageError('give exactly one of --every <duration> and --cron "<expr>"');
  if (options.every !== undefined) {
    let ms: number;
    try {
      ms = msToNumber(options.every as `${number}h`);
    } catch {
      ms = NaN;
    }
    if (!Number.isFinite(ms) || ms < 1_000) throw new UsageError(`option '--every <duration>' argument '${options.every}' is invalid: give a duration of a second or more, e.g. 30m, 1h, 1d`);
  }
  if (options.cron !== undefined && options.cron.trim().split(/\s+/).length < 5)
    throw new UsageError(`option '--cron <expr>' argument '${options.cron}' is invalid: give five fields, e.g. "0 9 * * MON-FRI"`);
  if (message.trim() === '') throw new UsageError('the message must not be empty');
  const sandbox = sandboxSettings(options);
  if (options.check !== false) {
    const problem = await checkBundleLocally(bundlePath, agentId, sandbox);
    if (problem) return refuse(out, options, problem.message, problem.type);
  }
  return withSession(out, async (temporal) => {
    await temporal.loopwright.schedules.create({
      name,
      bundlePath,
      agentId,
      message,
      ...(options.every !== undefined ? { every: options.every } : { cron: options.cron! }),
      ...(options.paused ? { paused: true } : {}),
      maxIterations: options.maxIterations,
      model: options.model,
      ...sandbox,
      ...modelSessionSettings(options, process.env, { terminal: false }),
      ...toolSessionSettings(options),
    });
    const when = options.every !== undefined ? `every ${options.every}` : `on cron "${options.cron}"`;
    if (options.json) out.log(JSON.stringify({ name, created: true, paused: options.paused === true }));
    else out.log(`Schedule ${name} created: a one-shot session of ${agentId} ${when}${options.paused ? ' (paused: `loopwright schedule unpause ' + name + '`)' : ''}`);
    await workerHint(temporal, out, options);
    return EXIT.OK;
  });
}

export async function scheduleListCommand(options: JsonOption, out: CommandOutput): Promise<number> {
  return withSession(out, async (temporal) => {
    const schedules = await temporal.loopwright.schedules.list();
    if (options.json) {
      out.log(JSON.stringify({ schedules, count: schedules.length }));
      return EXIT.OK;
    }
    if (schedules.length === 0) out.log('No schedules.');
    for (const s of schedules) out.log(scheduleText(s));
    return EXIT.OK;
  });
}

/** pause, unpause, trigger, delete: one call on schedule `name`. */
export async function scheduleActionCommand(action: 'pause' | 'unpause' | 'trigger' | 'delete', name: string, options: JsonOption, out: CommandOutput): Promise<number> {
  return withSession(out, async (temporal) => {
    const schedules = temporal.loopwright.schedules;
    await (action === 'delete' ? schedules.delete(name) : action === 'trigger' ? schedules.trigger(name) : schedules[action](name));
    const done = { pause: 'paused', unpause: 'unpaused', trigger: 'triggered: a session starts now', delete: 'deleted' }[action];
    if (options.json) out.log(JSON.stringify({ name, action }));
    else out.log(`Schedule ${name} ${done}`);
    if (action === 'trigger' || action === 'unpause') await workerHint(temporal, out, options);
    return EXIT.OK;
  });
}

function scheduleText(s: ScheduleLine): string {
  const head = `${s.name}  ${s.paused ? 'paused' : 'active'}  ${s.when}${s.nextRun ? `  next ${s.nextRun}` : ''}`;
  const what = `  ${s.agent ?? '?'} · ${s.message ?? ''}${s.recent.length ? ` · last session ${s.recent.at(-1)}` : ''}${s.note ? ` · ${s.note}` : ''}`;
  return `${head}\n${what}`;
}

function refuse(out: CommandOutput, options: JsonOption, message: string, type: string): number {
  if (options.json) out.log(JSON.stringify({ error: message, type }));
  else out.error(`Error: ${message}`);
  return EXIT.FAILED;
}

/** Scheduled sessions need a long-lived worker: say so when none polls. */
async function workerHint(temporal: TemporalSession, out: CommandOutput, options: JsonOption): Promise<void> {
  if (options.json || (await hasLongLivedWorker(temporal).catch(() => true))) return;
  out.error(`No worker polls task queue ${temporal.taskQueue}: scheduled sessions wait until one does (\`LOOPWRIGHT_TASK_QUEUE=${temporal.taskQueue} loopwright worker\`).`);
}
