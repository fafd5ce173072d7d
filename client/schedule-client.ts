/**
 * Schedules of one-shot sessions, on Temporal Schedules: each action starts an `agentSession` with
 * `oneShot` and the schedule's message, whose outputs, status and search attributes are kept like
 * any other session's (it shows in `loopwright list`). The schedule id is the name given.
 */
import { type Client, type ScheduleSummary, ScheduleOverlapPolicy } from '@temporalio/client';
import { SESSION_WORKFLOW } from '../common/contract/session-definitions';
import { type SessionSettings, sessionInput } from './session-input';

/** Memo key of a schedule Loopwright created: what its sessions run. */
export const SCHEDULE_MEMO = 'loopwrightSchedule';

/** A new schedule: its name, the session's settings and message, and when (`every` or `cron`). */
export interface CreateScheduleOptions extends Omit<SessionSettings, 'firstMessage' | 'oneShot' | 'continued' | 'branchFrom'> {
  name: string;
  message: string;
  /** An interval (`1h`, `30 minutes`, `1d`) ... */
  every?: string;
  /** ... or a cron expression (`0 9 * * MON-FRI`). */
  cron?: string;
  /** Create it paused. */
  paused?: boolean;
}

/** One line of `list`. */
export interface ScheduleLine {
  name: string;
  paused: boolean;
  note?: string;
  agent?: string;
  bundle?: string;
  message?: string;
  /** `every 1h` or `cron 0 9 * * *`, as the server describes the spec. */
  when: string;
  nextRun?: string;
  /** The sessions it started most recently (workflow ids), oldest first. */
  recent: string[];
}

/** What the schedules need of a LoopwrightClient. */
export interface ScheduleClientHost {
  readonly client: Client;
  readonly taskQueue: string;
  hasSearchAttributes(): Promise<boolean>;
}

/** Create, list, pause, unpause, trigger and delete schedules of one-shot sessions. */
export class LoopwrightSchedules {
  constructor(private readonly host: ScheduleClientHost) {}

  /** Create schedule `name`; its sessions get workflow ids `loopwright-schedule-<name>-<time>`. */
  async create(options: CreateScheduleOptions): Promise<{ name: string }> {
    const { name, message, every, cron, paused, ...settings } = options;
    if ((every === undefined) === (cron === undefined)) throw new Error('A schedule needs exactly one of every and cron');
    if (message.trim() === '') throw new Error('The message must not be empty');
    const input = await sessionInput({ ...settings, firstMessage: message, oneShot: true }, () => this.host.hasSearchAttributes());
    await this.host.client.schedule.create({
      scheduleId: name,
      spec: every !== undefined ? { intervals: [{ every: every as `${number}h` }] } : { cronExpressions: [cron!] },
      action: {
        type: 'startWorkflow',
        workflowType: SESSION_WORKFLOW,
        taskQueue: this.host.taskQueue,
        workflowId: `loopwright-schedule-${name}`,
        args: [input],
        staticSummary: `${input.agentId} · scheduled by ${name} · ${message.replace(/\s+/g, ' ').slice(0, 60)}`,
      },
      // A run still going when the next is due: the next waits for it (one at most).
      policies: { overlap: ScheduleOverlapPolicy.BUFFER_ONE },
      memo: { [SCHEDULE_MEMO]: { agent: input.agentId, bundle: input.bundlePath, message: message.slice(0, 200), when: every !== undefined ? `every ${every}` : `cron ${cron}` } },
      state: { paused: paused === true, ...(paused ? { note: 'created paused' } : {}) },
    });
    return { name };
  }

  /** The schedules that start Loopwright sessions (the server's list may lag a second behind a change). */
  async list(): Promise<ScheduleLine[]> {
    const lines: ScheduleLine[] = [];
    for await (const schedule of this.host.client.schedule.list()) {
      if (schedule.action?.workflowType !== SESSION_WORKFLOW) continue;
      lines.push(scheduleLine(schedule));
    }
    return lines.sort((a, b) => a.name.localeCompare(b.name));
  }

  pause(name: string, note?: string): Promise<void> {
    return this.host.client.schedule.getHandle(name).pause(note);
  }

  unpause(name: string, note?: string): Promise<void> {
    return this.host.client.schedule.getHandle(name).unpause(note);
  }

  /** Start a session now, whatever the schedule says (also when paused, or while an earlier run goes on). */
  trigger(name: string): Promise<void> {
    return this.host.client.schedule.getHandle(name).trigger(ScheduleOverlapPolicy.ALLOW_ALL);
  }

  delete(name: string): Promise<void> {
    return this.host.client.schedule.getHandle(name).delete();
  }

  /** The schedule's line, and the workflow ids of the sessions it started most recently. */
  async describe(name: string): Promise<ScheduleLine> {
    const description = await this.host.client.schedule.getHandle(name).describe();
    return scheduleLine(description as unknown as ScheduleSummary);
  }
}

function scheduleLine(schedule: ScheduleSummary): ScheduleLine {
  const memo = schedule.memo?.[SCHEDULE_MEMO] as { agent?: string; bundle?: string; message?: string; when?: string } | undefined;
  const spec = schedule.spec;
  const when = [
    ...(spec?.intervals ?? []).map((i) => `every ${typeof i.every === 'number' ? `${i.every / 1000}s` : String(i.every)}`),
    ...(spec?.calendars?.length ? ['cron'] : []),
    ...((spec as { cronExpressions?: string[] } | undefined)?.cronExpressions ?? []).map((c) => `cron ${c}`),
  ].join(', ');
  const next = schedule.info.nextActionTimes[0];
  return {
    name: schedule.scheduleId,
    paused: schedule.state.paused,
    ...(schedule.state.note ? { note: schedule.state.note } : {}),
    ...(memo?.agent ? { agent: memo.agent } : {}),
    ...(memo?.bundle ? { bundle: memo.bundle } : {}),
    ...(memo?.message ? { message: memo.message } : {}),
    when: memo?.when ?? (when || 'manual'),
    ...(next && !schedule.state.paused ? { nextRun: next.toISOString() } : {}),
    recent: schedule.info.recentActions.map((a) => a.action.workflow.workflowId),
  };
}
