import * as fs from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import { z } from 'zod';
import { TemporalConfigError } from './errors';

/**
 * The one reader of Temporal connection settings from the environment, shared by the client, the
 * worker and the command line. Names follow the Temporal CLI where it has them.
 */

const booleanText = z.enum(['true', 'false', '1', '0', 'yes', 'no'], {
  error: 'expected true or false',
});
const optionalText = z.string().trim().min(1).optional();

const envSchema = z.object({
  TEMPORAL_ADDRESS: z
    .string()
    .trim()
    .regex(/^(\[[^\]]+\]|[^\s:/]+)(:\d{1,5})?$/, 'expected host:port, e.g. localhost:7233')
    .optional(),
  TEMPORAL_NAMESPACE: optionalText,
  TEMPORAL_API_KEY: optionalText,
  TEMPORAL_TLS: booleanText.optional(),
  TEMPORAL_TLS_CERT: optionalText,
  TEMPORAL_TLS_KEY: optionalText,
  TEMPORAL_TLS_CA: optionalText,
  TEMPORAL_TLS_SERVER_NAME: optionalText,
});

/** Settings needed to connect to a Temporal server. */
export interface TemporalSettings {
  /** `host:port` of the frontend. */
  address: string;
  /** Namespace to use (default "default"). */
  namespace: string;
  /** TLS: `true` for system roots, a config for mTLS or a custom CA, absent for plaintext. */
  tls?: TLSConfig | boolean;
  /** Temporal Cloud API key (sent as a bearer token; implies TLS unless TEMPORAL_TLS=false). */
  apiKey?: string;
}

/** What the environment says: the address is absent when TEMPORAL_ADDRESS is not set. */
export type TemporalEnvSettings = Omit<TemporalSettings, 'address'> & { address?: string };

/**
 * Reads and validates TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS,
 * TEMPORAL_TLS_CERT / TEMPORAL_TLS_KEY (client certificate and key files), TEMPORAL_TLS_CA (server
 * CA file) and TEMPORAL_TLS_SERVER_NAME. The CLI's longer names (TEMPORAL_TLS_CLIENT_CERT_PATH,
 * TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_SERVER_CA_CERT_PATH) are read too. Throws
 * TemporalConfigError naming the bad variable.
 */
export function readTemporalEnv(env: NodeJS.ProcessEnv = process.env): TemporalEnvSettings {
  const raw = {
    ...pick(env),
    TEMPORAL_TLS_CERT: nonEmpty(env.TEMPORAL_TLS_CERT) ?? nonEmpty(env.TEMPORAL_TLS_CLIENT_CERT_PATH),
    TEMPORAL_TLS_KEY: nonEmpty(env.TEMPORAL_TLS_KEY) ?? nonEmpty(env.TEMPORAL_TLS_CLIENT_KEY_PATH),
    TEMPORAL_TLS_CA: nonEmpty(env.TEMPORAL_TLS_CA) ?? nonEmpty(env.TEMPORAL_TLS_SERVER_CA_CERT_PATH),
  };
  const parsed = envSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue.path[0]);
    const value = (raw as Record<string, string | undefined>)[field];
    // The API key must never reach a message; other values help the operator spot the typo.
    const shown = field === 'TEMPORAL_API_KEY' || value === undefined ? '' : ` (got "${value}")`;
    throw new TemporalConfigError(`Invalid ${field}: ${issue.message}${shown}`, field);
  }
  const e = parsed.data;
  if ((e.TEMPORAL_TLS_CERT === undefined) !== (e.TEMPORAL_TLS_KEY === undefined)) {
    const missing = e.TEMPORAL_TLS_CERT === undefined ? 'TEMPORAL_TLS_CERT' : 'TEMPORAL_TLS_KEY';
    throw new TemporalConfigError(`Invalid ${missing}: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together`, missing);
  }
  const tlsFlag = e.TEMPORAL_TLS === undefined ? undefined : ['true', '1', 'yes'].includes(e.TEMPORAL_TLS);
  const custom: TLSConfig = {};
  if (e.TEMPORAL_TLS_CERT !== undefined && e.TEMPORAL_TLS_KEY !== undefined) {
    custom.clientCertPair = {
      crt: readFileSetting('TEMPORAL_TLS_CERT', e.TEMPORAL_TLS_CERT),
      key: readFileSetting('TEMPORAL_TLS_KEY', e.TEMPORAL_TLS_KEY),
    };
  }
  if (e.TEMPORAL_TLS_CA !== undefined) custom.serverRootCACertificate = readFileSetting('TEMPORAL_TLS_CA', e.TEMPORAL_TLS_CA);
  if (e.TEMPORAL_TLS_SERVER_NAME !== undefined) custom.serverNameOverride = e.TEMPORAL_TLS_SERVER_NAME;
  const hasCustom = Object.keys(custom).length > 0;
  if (tlsFlag === false && hasCustom) {
    throw new TemporalConfigError('Invalid TEMPORAL_TLS: it is false but TLS certificate settings are set', 'TEMPORAL_TLS');
  }
  // TLS is on when asked for, when certificates are given, or with an API key (Temporal Cloud
  // refuses plaintext); TEMPORAL_TLS=false turns the API-key default off for local proxies.
  const tls = hasCustom ? custom : tlsFlag ?? (e.TEMPORAL_API_KEY !== undefined ? true : undefined);
  return {
    address: e.TEMPORAL_ADDRESS,
    namespace: e.TEMPORAL_NAMESPACE ?? 'default',
    ...(tls === undefined || tls === false ? {} : { tls }),
    ...(e.TEMPORAL_API_KEY === undefined ? {} : { apiKey: e.TEMPORAL_API_KEY }),
  };
}

/**
 * Options for `Connection.connect` (client) and `NativeConnection.connect` (worker) from one
 * settings object, so both sides connect the same way.
 */
export function connectionOptions(settings: Pick<TemporalSettings, 'address' | 'tls' | 'apiKey'>): {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
} {
  return {
    address: settings.address,
    ...(settings.tls === undefined ? {} : { tls: settings.tls }),
    ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
  };
}

function pick(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const key of Object.keys(envSchema.shape)) out[key] = nonEmpty(env[key]);
  return out;
}

/** An empty variable counts as unset, as shells make it easy to export one by accident. */
function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function readFileSetting(field: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new TemporalConfigError(`Invalid ${field}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, field);
  }
}
