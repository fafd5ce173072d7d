/**
 * `loopwright chat`: an interactive conversation with a session in the terminal. While a turn runs,
 * one live line shows the iteration, the tool running with its path and the tokens so far; tool
 * results, notices, approvals and questions are shown as they arrive. Ctrl-C during a turn
 * interrupts it; Ctrl-C at the prompt leaves the chat (the session stays; `chat --id` rejoins).
 * Without a terminal (piped input) it reads one message per line and prints replies on stdout, so
 * it can be scripted: a message waits for the turn before it, and `/approve` or `/deny` wait for a
 * call to decide while a turn runs.
 */
import readline from 'node:readline';
import type { ApprovalPolicy, SessionState, TurnResult } from '../../common/session-types';
import { withWorker } from '../in-process-worker';
import { type CommandOutput, UsageError } from '../output';
import { onSignalGracefully, setRejoinHint } from '../exit-on-signal';
import { SessionRejectedError, type SessionHandle } from '../../client/session-client';
import { sandboxSettings } from './session-commands';
import { modelSessionSettings } from './session-settings';
import { toolSessionSettings } from './tool-settings';
import { CHAT_HELP, describeMessage, newBudgetWarnings, parseBudgetArgs, turnEndLines } from './chat-text';
import { budgetLines, formatCompaction, stateDetailLines } from './session-text';
import { openTemporal } from '../temporal-session';
import { type LiveReply, startLiveReply } from './live-reply';
import { approvalLines } from './approval-text';

/** Options of `loopwright chat`; the setting flags' values besides (see the settings table). */
export interface ChatOptions {
  /** Rejoin this session (without a bundle and agent), or the id of the new one. */
  id?: string;
  /** Tool calls that wait for /approve (default `writes`). */
  approve?: ApprovalPolicy;
  maxIterations?: number;
  model?: string;
}

/** `loopwright chat <bundle> <agent>` or `loopwright chat --id <workflow-id>`. */
export async function chatCommand(bundlePath: string | undefined, agentId: string | undefined, options: ChatOptions, out: CommandOutput): Promise<number> {
  if (bundlePath === undefined ? !options.id : agentId === undefined) throw new UsageError('chat needs <bundle> <agent>, or --id <workflow-id> to rejoin');
  const tty = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const temporal = await openTemporal(out);
  try {
    let session: SessionHandle;
    let rejoined = false;
    if (bundlePath === undefined || agentId === undefined) {
      session = temporal.loopwright.session(options.id!);
      rejoined = true;
    } else {
      session = await temporal.loopwright.start({
        bundlePath,
        agentId,
        ...(options.id ? { workflowId: options.id } : {}),
        approval: { policy: options.approve ?? 'writes' },
        ...sandboxSettings(options),
        ...modelSessionSettings(options, process.env, { terminal: tty }),
        ...toolSessionSettings(options),
        ...(options.maxIterations ? { maxIterations: options.maxIterations } : {}),
        ...(options.model ? { model: options.model } : {}),
      });
    }
    setRejoinHint(`loopwright chat --id ${session.workflowId}`);
    return await withWorker(temporal, { watch: session.workflow, onStart: (reason) => out.error(`  (${reason}; running one in this process)`) }, () => new Chat(session, out, tty).run(rejoined));
  } finally {
    await temporal.close();
  }
}

class Chat {
  private turn: Promise<TurnResult> | undefined;
  /** Each turn's follower, and the chain they run on: a turn's reply is printed after the one before it. */
  private readonly followers = new Map<Promise<TurnResult>, Promise<void>>();
  private printed: Promise<void> = Promise.resolve();
  private seenMessages = 0;
  private lastLive = '';
  private live: LiveReply | undefined;
  private shownApprovals = new Set<string>();
  private shownBudgetWarnings = new Set<string>();
  private closed = false;

  constructor(
    private readonly session: SessionHandle,
    private readonly out: CommandOutput,
    private readonly tty: boolean,
  ) {}

  async run(rejoined: boolean): Promise<number> {
    const state = await this.waitReady();
    if (!state) return 1;
    this.seenMessages = state.messageCount;
    if (this.tty || rejoined) {
      this.info(`Session ${this.session.workflowId} — ${state.agent ? `${state.agent.name}, ${state.agent.title}` : 'agent'}`);
      if (state.agent?.commands.length) this.info(`Commands: ${state.agent.commands.map((c) => c.cmd).join(' ')}   (/help for chat commands)`);
    }
    if (!rejoined) for (const warning of state.warnings ?? []) this.info(`Warning: ${warning}`);
    if (rejoined) await this.showLastExchange(state);
    // Rejoined while a turn runs: follow it (live on a terminal), then prompt.
    const busy = ['thinking', 'executing_tool', 'waiting_for_approval'].includes(state.status);
    if (rejoined && busy) {
      this.turn = this.session.awaitTurn(state.turn);
      this.turn.catch(() => undefined);
    }
    const rl = readline.createInterface({ input: process.stdin, output: this.tty ? process.stdout : undefined, terminal: this.tty });
    const lines: string[] = [];
    let wake: (() => void) | undefined;
    let inputEnded = false;
    rl.on('line', (line) => {
      lines.push(line);
      wake?.();
    });
    rl.on('close', () => {
      inputEnded = true;
      wake?.();
    });
    rl.on('SIGINT', () => {
      if (this.turn) {
        this.info('  … interrupting');
        void this.session.interrupt('Ctrl-C').catch(() => undefined);
      } else {
        this.closed = true;
        wake?.();
      }
    });
    const prompt = (): void => {
      if (this.tty) rl.prompt();
    };
    rl.setPrompt('> ');
    if (this.turn) void this.finishTurn().then(prompt);
    else prompt();
    try {
      for (;;) {
        if (this.closed) {
          this.info(`Left the chat; the session stays open. Rejoin with: loopwright chat --id ${this.session.workflowId}`);
          return 0;
        }
        const line = lines.shift();
        if (line === undefined) {
          if (inputEnded) {
            // Piped input ran out: finish the turn in flight, then leave the session open.
            await this.finishTurn();
            return 0;
          }
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        const text = line.trim();
        if (text === '') {
          prompt();
          continue;
        }
        if (text.startsWith('/')) {
          const done = await this.command(text);
          if (done) return 0;
        } else if (this.turn && this.tty) {
          this.info('  (a turn is running: /stop to interrupt it, or wait for the reply)');
        } else {
          // Piped: a message waits for the turn before it.
          await this.finishTurn();
          this.startTurn(text);
          void this.finishTurn().then(prompt);
          continue;
        }
        if (!this.turn) prompt();
      }
    } finally {
      rl.close();
    }
  }

  /** Wait until the agent is initialised (or the session failed). */
  private async waitReady(): Promise<SessionState | undefined> {
    for (let i = 0; i < 200; i++) {
      const state = await this.session.state().catch(() => undefined);
      if (state?.status === 'failed') {
        this.out.error(`The session failed: ${state.error ?? 'unknown error'}`);
        return undefined;
      }
      if (state && state.status !== 'initializing') return state;
      await sleep(100);
    }
    this.out.error('The session did not become ready within 20 s');
    return undefined;
  }

  private startTurn(message: string): void {
    this.turn = this.session.send(message);
    this.turn.catch(() => undefined);
    // Without a terminal Ctrl-C arrives as a signal: during a turn it interrupts the turn, as at a terminal.
    const release = onSignalGracefully(() => {
      this.info('  … interrupting');
      void this.session.interrupt('Ctrl-C').catch(() => undefined);
      return 'handled';
    });
    void this.turn.then(release, release);
  }

  /**
   * Follow the running turn until it ends, then print its reply (once, however many wait for it).
   * With no turn running it still waits for the last reply to be printed.
   */
  private finishTurn(): Promise<void> {
    const turn = this.turn;
    if (!turn) return this.printed;
    let follower = this.followers.get(turn);
    if (!follower) {
      follower = this.printed.then(() => this.follow(turn)).catch(() => undefined);
      this.followers.set(turn, follower);
      this.printed = follower;
      void follower.then(() => this.followers.delete(turn));
    }
    return follower;
  }

  private async follow(turn: Promise<TurnResult>): Promise<void> {
    let settled = false;
    const finished = turn.then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    void finished.then(() => (settled = true));
    // On a terminal the reply is printed while the model writes it.
    const live = this.tty ? startLiveReply(this.session, { write: (t) => process.stdout.write(t), notice: (l) => this.info(l), before: () => this.clearLive() }) : undefined;
    this.live = live;
    while (!settled) {
      await Promise.race([finished, sleep(300)]);
      await this.showProgress().catch(() => undefined);
    }
    const outcome = await finished;
    await live?.stop();
    this.live = undefined;
    if (this.turn === turn) this.turn = undefined;
    this.clearLive();
    await this.showNewMessages().catch(() => undefined);
    if ('error' in outcome) {
      const error = outcome.error;
      this.out.error(error instanceof SessionRejectedError ? `Rejected: ${error.message}` : `Error: ${(error as Error).message}`);
      return;
    }
    const result = outcome.result;
    if (result.response && !live?.showed(result.response)) this.out.log(result.response);
    for (const line of turnEndLines(result)) this.info(line);
    // A budget passed its warning share during the turn: said once per budget.
    const state = await this.session.state().catch(() => undefined);
    for (const line of newBudgetWarnings(state?.budget?.warnings, this.shownBudgetWarnings)) this.info(line);
  }

  /** The live line, tool results as they arrive, and calls waiting for approval. */
  private async showProgress(): Promise<void> {
    const state = await this.session.state();
    await this.showNewMessages();
    for (const line of newBudgetWarnings(state.budget?.warnings, this.shownBudgetWarnings)) {
      this.clearLive();
      this.info(line);
    }
    for (const approval of state.pendingApprovals) {
      if (this.shownApprovals.has(approval.callId)) continue;
      this.shownApprovals.add(approval.callId);
      this.clearLive();
      const { head, details } = approvalLines(approval);
      this.info(`  ? ${head}`);
      for (const line of details) this.info(`    ${line}`);
      this.info(`    /approve ${approval.callId}   or   /deny ${approval.callId} [reason]`);
    }
    const tools = state.runningTools.map((t) => (t.detail ? `${t.name} ${t.detail}` : t.name)).join(', ');
    if (this.live?.writing) return;
    const live = `  … iteration ${state.iteration}/${state.maxIterations}${tools ? ` · ${tools}` : ` · ${state.status.replace(/_/g, ' ')}`} · ${state.usage.totalTokens} tokens`;
    if (live === this.lastLive) return;
    this.lastLive = live;
    if (this.tty) process.stderr.write(`\r\u001b[2K${live}`);
    else this.out.error(live);
  }

  private clearLive(): void {
    if (this.tty && this.lastLive) process.stderr.write('\r\u001b[2K');
    this.lastLive = '';
  }

  /** Tool results and notices appended since the last look. */
  private async showNewMessages(): Promise<void> {
    const messages = await this.session.messages(this.seenMessages);
    this.seenMessages += messages.length;
    for (const message of messages) {
      const line = describeMessage(message);
      if (line) {
        this.clearLive();
        this.info(line);
      }
    }
  }

  private async showLastExchange(state: SessionState): Promise<void> {
    const from = Math.max(0, state.messageCount - 40);
    const recent = await this.session.messages(from);
    const lastUser = recent.map((m) => m.role).lastIndexOf('user');
    if (lastUser >= 0) this.info(`You: ${recent[lastUser]!.content}`);
    const reply = [...recent].reverse().find((m) => m.role === 'assistant' && m.content);
    if (reply?.content) this.out.log(reply.content);
    if (state.pendingQuestion) this.info(`(The agent asked: ${state.pendingQuestion.question})`);
  }

  /** Run a slash command; true when the chat is over. */
  private async command(text: string): Promise<boolean> {
    const [name, ...args] = text.split(/\s+/);
    try {
      switch (name) {
        case '/help':
          this.info(CHAT_HELP);
          return false;
        case '/stop':
          if (!this.turn) this.info('  (no turn is running)');
          else await this.session.interrupt('/stop');
          return false;
        case '/status': {
          const state = await this.session.state();
          this.info(
            `  status ${state.status.replace(/_/g, ' ')} · turn ${state.turn} · iteration ${state.iteration}/${state.maxIterations} · ${state.usage.totalTokens} tokens · ${state.messageCount} messages · run ${state.run}`,
          );
          for (const line of stateDetailLines(state)) this.info(`  ${line}`);
          for (const p of state.pendingApprovals) this.info(`  waiting for approval: ${p.callId} ${p.tool}${p.path ? ` ${p.path}` : ''}`);
          return false;
        }
        case '/approve':
        case '/deny': {
          const callId = args[0] && args[0] !== '-' ? args[0] : undefined;
          await this.waitForApproval(callId);
          const ids = name === '/approve' ? await this.session.approve(callId) : await this.session.deny(callId, args.slice(1).join(' ') || undefined);
          this.info(`  ${name === '/approve' ? 'approved' : 'denied'}: ${ids.join(', ')}`);
          return false;
        }
        case '/extend': {
          const n = args[0] === undefined ? undefined : Number(args[0]);
          const limit = await this.session.extend(n);
          this.info(`  this turn may now make ${limit} model calls`);
          return false;
        }
        case '/compact': {
          if (this.turn && this.tty) {
            this.info('  (a turn is running: /compact once it has ended)');
            return false;
          }
          // Piped: compact after the turn before it, as a message would wait.
          await this.finishTurn();
          const record = await this.session.compact();
          this.info(`  ${record ? formatCompaction(record) : 'nothing to compact'}`);
          return false;
        }
        case '/budget': {
          const change = parseBudgetArgs(args);
          if (typeof change === 'string') {
            this.info(`  ${change}`);
            return false;
          }
          const budget = Object.keys(change).length ? await this.session.budget(change) : (await this.session.state()).budget;
          if (!budget) this.info('  this session reports no budgets');
          for (const line of budget ? budgetLines(budget) : []) this.info(`  ${line}`);
          return false;
        }
        case '/end':
          await this.finishTurn();
          await this.session.end();
          await this.session.result().catch(() => undefined);
          this.info(`Session ${this.session.workflowId} ended.`);
          return true;
        default:
          this.info(`  unknown command ${name}; /help lists them`);
          return false;
      }
    } catch (err) {
      this.out.error(err instanceof SessionRejectedError ? `  rejected: ${err.message}` : `  error: ${(err as Error).message}`);
      return false;
    }
  }

  /** With a turn running and nothing to decide yet, wait until a call asks (or the turn ends). */
  private async waitForApproval(callId: string | undefined): Promise<void> {
    while (this.turn) {
      const state = await this.session.state();
      if (state.pendingApprovals.some((p) => callId === undefined || p.callId === callId)) return;
      await sleep(100);
    }
  }

  private info(line: string): void {
    this.out.error(line);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
