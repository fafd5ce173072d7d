/**
 * The typed client API: start sessions, talk to them and read their state. The `loopwright`
 * command line is built on it, and programs can use it the same way.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { type Client, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { DEFAULT_TASK_QUEUE } from '../common/defaults';
import type { ChatMessage } from '../common/messages';
import type { SessionInput, SessionResult, SessionState, TurnResult } from '../common/session-types';
import {
  endSignal,
  interruptSignal,
  messagesQuery,
  SESSION_WORKFLOW,
  sendUpdate,
  stateQuery,
} from '../workflows/definitions';

/** Options of a new session. */
export interface StartSessionOptions extends Omit<SessionInput, 'bundlePath'> {
  /** Bundle folder; made absolute here, since the worker may run elsewhere on this machine. */
  bundlePath: string;
  /** Workflow id (default `loopwright-<agent>-<uuid>`). */
  workflowId?: string;
}

/** Starts and finds sessions on one task queue. */
export class LoopwrightClient {
  constructor(
    readonly client: Client,
    readonly taskQueue: string = DEFAULT_TASK_QUEUE,
  ) {}

  /** Start a session; it initialises the agent and then waits for messages (or runs `firstMessage`). */
  async start(options: StartSessionOptions): Promise<SessionHandle> {
    const { workflowId, ...rest } = options;
    const input: SessionInput = { ...rest, bundlePath: path.resolve(options.bundlePath) };
    const id = workflowId ?? `loopwright-${slug(options.agentId)}-${randomUUID().slice(0, 8)}`;
    const handle = await this.client.workflow.start(SESSION_WORKFLOW, {
      taskQueue: this.taskQueue,
      workflowId: id,
      args: [input],
    });
    return new SessionHandle(handle);
  }

  /** A handle on an existing session. */
  session(workflowId: string): SessionHandle {
    return new SessionHandle(this.client.workflow.getHandle(workflowId));
  }
}

/** One session: send messages, interrupt, end, and read its state. */
export class SessionHandle {
  constructor(readonly workflow: WorkflowHandle) {}

  get workflowId(): string {
    return this.workflow.workflowId;
  }

  /** Run a turn and wait for its result. Rejected with `busy` while another turn runs. */
  async send(message: string): Promise<TurnResult> {
    try {
      return await this.workflow.executeUpdate(sendUpdate, { args: [message] });
    } catch (err) {
      // The validator's reason (`busy`, empty message) is the cause; surface it as the message.
      if (err instanceof WorkflowUpdateFailedError && err.cause) {
        throw new SessionRejectedError(err.cause.message, { cause: err });
      }
      throw err;
    }
  }

  /** Cancel the model or tool call in flight; the turn ends `interrupted`. */
  interrupt(reason?: string): Promise<void> {
    return this.workflow.signal(interruptSignal, reason);
  }

  /** Complete the session after the current turn. */
  end(): Promise<void> {
    return this.workflow.signal(endSignal);
  }

  state(): Promise<SessionState> {
    return this.workflow.query(stateQuery);
  }

  messages(from = 0): Promise<ChatMessage[]> {
    return this.workflow.query(messagesQuery, from);
  }

  /** Wait for the session to end. */
  result(): Promise<SessionResult> {
    return this.workflow.result() as Promise<SessionResult>;
  }
}

/** The session refused a message (`busy`, empty, or the session is ending); `message` says why. */
export class SessionRejectedError extends Error {
  override name = 'SessionRejectedError';
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'agent';
}
