/**
 * The `SessionInput` a new session starts with, as `LoopwrightClient.start` builds it: the bundle
 * path made absolute (the worker may run elsewhere on this machine) and search attributes on when
 * the namespace has them registered. Batches and schedules build their sessions' input the same way.
 */
import path from 'node:path';
import type { SessionInput } from '../common/session-types';

/** A session's settings as a caller gives them: the bundle folder may be relative. */
export type SessionSettings = Omit<SessionInput, 'bundlePath'> & { bundlePath: string };

/** The input a session of `settings` starts with. */
export async function sessionInput<T extends SessionSettings>(settings: T, hasSearchAttributes: () => Promise<boolean>): Promise<T & SessionInput> {
  const input = { ...settings, bundlePath: path.resolve(settings.bundlePath) };
  if (input.searchAttributes === undefined && (await hasSearchAttributes())) input.searchAttributes = true;
  return input;
}
