/**
 * Signals, queries and updates of the session workflow. Clients import these definitions too, so
 * both sides agree on names and types.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ChatMessage } from '../common/messages';
import type { SessionState, TurnResult } from '../common/session-types';

/** Cancel the model or tool call in flight; the turn ends `interrupted` and the session waits for the next message. */
export const interruptSignal = defineSignal<[reason?: string]>('interrupt');

/** Complete the session after the current turn (at once when idle). */
export const endSignal = defineSignal('end');

/** Status, turn, iteration, running tools and token usage. */
export const stateQuery = defineQuery<SessionState>('state');

/** The whole transcript so far (or from an index: `messages(from)`). */
export const messagesQuery = defineQuery<ChatMessage[], [from?: number]>('messages');

/** Run one turn for a user message and return its result. Rejected when empty or while a turn runs (`busy`). */
export const sendUpdate = defineUpdate<TurnResult, [message: string]>('send');

/** Name of the session workflow type, as registered by the worker. */
export const SESSION_WORKFLOW = 'agentSession';
