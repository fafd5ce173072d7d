/**
 * Turn extensions: how a feature takes part in a turn without the turn naming it. A feature
 * (verification, delegation, …) gives the turn an object with the hooks it needs; the turn calls
 * them at fixed points, in the order the session lists its extensions: when a turn begins, when the
 * user's message is a command the feature answers itself, when a call is one the feature runs, when
 * a reply's tool results are in, when the model answers, and when the turn's result is written.
 */
import type { TokenUsage, ToolCall, ToolResult } from '../../common/messages';
import type { TurnResult, TurnStatus } from '../../common/session-types';
import type { HashedTranscript } from '../../common/transcript';

/** Where in the session a hook is called, and how it counts what it spends. */
export interface TurnPoint {
  turn: number;
  /** Count a model call the feature made in the turn's usage and budgets. */
  recordUsage(usage: TokenUsage): void;
}

/** Where a tool call stands, for a feature that runs it (a child session's id is made from it). */
export interface CallPoint {
  turn: number;
  iteration: number;
  transcript: HashedTranscript;
  /** Index of the turn's first message. */
  firstIndex: number;
  recordUsage(usage: TokenUsage): void;
}

/** How a turn ends, when a feature ends it. */
export interface TurnEnd {
  status: TurnStatus;
  /** The reply (the model's answer when the feature does not replace it). */
  response?: string;
  error?: string;
}

/** What the turn does after the model's answer: go on with a message to the model, or end as said. */
export type AnswerVerdict = { continueWith: string } | { end: TurnEnd };

export interface TurnExtension {
  /** For logs. */
  readonly name: string;
  /** A turn began with a user message or an answer (not a turn resumed from the run before). */
  onTurnStart?(): void;
  /** When the user's message is a command this feature answers itself, the turn's work: the model is not called. */
  command?(message: string): ((at: TurnPoint) => Promise<TurnEnd & { response: string }>) | undefined;
  /** Whether this feature runs `call` itself, instead of its tool's activity. */
  runsCall?(call: ToolCall): boolean;
  /** Run a call `runsCall` accepted; never throws except for the turn's cancellation. */
  runCall?(call: ToolCall, at: CallPoint): Promise<ToolResult>;
  /** The results of one reply's tool calls, in call order; `writes` tells the tools that write. */
  onToolResults?(calls: readonly ToolCall[], results: readonly (ToolResult | undefined)[], writes: (name: string) => boolean): void;
  /** The model answered without tools (or completed): a verdict, or undefined to let the turn complete. */
  onAnswer?(at: TurnPoint): Promise<AnswerVerdict | undefined>;
  /** Fields this feature adds to the turn's result. */
  report?(transcript: HashedTranscript, from: number, to: number): Partial<TurnResult>;
}

/** The extension that runs `call`, if one does. */
export function runnerOf(extensions: readonly TurnExtension[], call: ToolCall): TurnExtension | undefined {
  return extensions.find((e) => e.runsCall?.(call) === true && e.runCall !== undefined);
}
