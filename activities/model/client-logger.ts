/**
 * The openai client's own logger (it logs when OPENAI_LOG asks, at `debug` with whole replies and
 * error bodies), writing to the console as the client's default does, with the worker's secrets
 * redacted from every line in every encoding.
 */
import { formatWithOptions } from 'node:util';
import type { ClientOptions } from 'openai';
import { redactSecrets } from '../redaction/redact';

/** The logger the openai client takes (its `logger` option). */
export type ClientLogger = NonNullable<ClientOptions['logger']>;

type Level = 'error' | 'warn' | 'info' | 'debug';

/** A logger for the openai client that redacts `secrets` (and key-like text) before writing to `sink`. */
export function redactingLogger(secrets: readonly string[], sink: Pick<Console, Level> = console): ClientLogger {
  const write =
    (level: Level) =>
    (message: string, ...rest: unknown[]): void => {
      sink[level](redactSecrets(formatWithOptions({ depth: 8, breakLength: Infinity }, message, ...rest), secrets));
    };
  return { error: write('error'), warn: write('warn'), info: write('info'), debug: write('debug') };
}
