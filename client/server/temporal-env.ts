import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TLSConfig } from '@temporalio/client';
import { type ClientConfigProfile, loadClientConfig, loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import { TemporalConfigError } from './errors';

/** Settings to connect to Temporal, the same for the client and for a worker's native connection. */
export interface TemporalSettings {
  /** `host:port`; absent when no variable, profile or config file names one (then the embedded server runs). */
  address?: string;
  namespace: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  /** gRPC metadata for every call (a profile's `grpc_meta`, TEMPORAL_GRPC_META_*). */
  metadata?: Record<string, string>;
  /** Where `address` came from, for messages: `TEMPORAL_ADDRESS`, or `profile "default" of <file>`. */
  addressSource?: string;
}

/** What a connection needs: the address, TLS, API key and metadata. */
export type ConnectionSettings = Omit<TemporalSettings, 'namespace' | 'addressSource'> & { address: string };

/** Loopwright's earlier names for the CLI's TLS variables, still read. */
const OLD_NAMES = { TEMPORAL_TLS_CERT: 'TEMPORAL_TLS_CLIENT_CERT_PATH', TEMPORAL_TLS_KEY: 'TEMPORAL_TLS_CLIENT_KEY_PATH', TEMPORAL_TLS_CA: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH' };

/**
 * Reads the settings as the `temporal` CLI does, with the SDK's `@temporalio/envconfig`: a profile
 * of `temporal.toml` (TEMPORAL_CONFIG_FILE, else `temporalio/temporal.toml` in the user's config
 * folder; TEMPORAL_PROFILE, else "default"), overridden by TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_GRPC_META_*. Bad input throws TemporalConfigError
 * naming the variable, file or profile (never quoting an API key).
 */
export function readTemporalEnv(env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  const vars = cleanEnv(env);
  const file = vars.TEMPORAL_CONFIG_FILE ?? defaultConfigFile(vars) ?? 'temporal.toml';
  if (vars.TEMPORAL_CONFIG_FILE !== undefined && !fs.existsSync(file)) throw new TemporalConfigError(`TEMPORAL_CONFIG_FILE names ${file}, which does not exist`, 'TEMPORAL_CONFIG_FILE');
  const where = `${vars.TEMPORAL_PROFILE === undefined ? '' : `profile "${vars.TEMPORAL_PROFILE}" of `}${file}`;
  let profile: ClientConfigProfile;
  try {
    profile = loadClientConfigProfile({ overrideEnvVars: vars });
  } catch (error) {
    const { message, line, column } = error as Error & { line?: number; column?: number };
    if (vars.TEMPORAL_PROFILE !== undefined && /^Profile '.*' not found/.test(message)) {
      const has = fs.existsSync(file) ? `has no such profile (it has: ${Object.keys(loadClientConfig({ overrideEnvVars: vars }).profiles).join(', ') || 'none'})` : 'does not exist';
      throw new TemporalConfigError(`TEMPORAL_PROFILE is "${vars.TEMPORAL_PROFILE}", but ${file} ${has}`, 'TEMPORAL_PROFILE');
    }
    // Only the first line of a TOML error: the rest quotes the file, which may hold an API key.
    throw new TemporalConfigError(`Invalid ${file}: ${message.split('\n')[0]}${line === undefined ? '' : ` (line ${line}, column ${column})`}`, file);
  }
  if (profile.address !== undefined && !/^(\[[^\]]+\]|[^\s:/[\]]+)(:\d{1,5})?$/.test(profile.address)) {
    const field = vars.TEMPORAL_ADDRESS !== undefined ? 'TEMPORAL_ADDRESS' : file;
    throw new TemporalConfigError(`Invalid ${field === file ? `address in ${where}` : field}: expected host:port, e.g. localhost:7233 (got "${profile.address}")`, field);
  }
  if ((profile.tls?.clientCert === undefined) !== (profile.tls?.clientKey === undefined)) {
    const missing = profile.tls?.clientCert === undefined ? 'TEMPORAL_TLS_CLIENT_CERT_PATH' : 'TEMPORAL_TLS_CLIENT_KEY_PATH';
    throw new TemporalConfigError(`Invalid ${missing}: a TLS client certificate and its key go together (in variables, or in ${where})`, missing);
  }
  let connect: ReturnType<typeof toClientOptions>;
  try {
    connect = toClientOptions(profile);
  } catch (error) {
    // A certificate file that cannot be read: name the variable that points at it, else the config file.
    const field = Object.keys(vars).find((key) => key.startsWith('TEMPORAL_TLS') && vars[key] === (error as NodeJS.ErrnoException).path) ?? file;
    throw new TemporalConfigError(`Invalid ${field === file ? `TLS settings in ${where}` : field}: ${(error as Error).message}`, field);
  }
  const { address, tls, apiKey, metadata } = connect.connectionOptions;
  const addressSource = vars.TEMPORAL_ADDRESS !== undefined ? 'TEMPORAL_ADDRESS' : `profile "${vars.TEMPORAL_PROFILE ?? 'default'}" of ${file}`;
  return {
    ...(address === undefined ? {} : { address, addressSource }),
    namespace: connect.namespace ?? 'default',
    ...(tls ? { tls } : {}),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(metadata === undefined || Object.keys(metadata).length === 0 ? {} : { metadata: metadata as Record<string, string> }),
  };
}

/** What `Connection.connect` (client) and `NativeConnection.connect` (worker) both take, so both connect the same way. */
export function connectionOptions({ address, tls, apiKey, metadata }: ConnectionSettings): ConnectionSettings {
  return { address, ...(tls === undefined ? {} : { tls }), ...(apiKey === undefined ? {} : { apiKey }), ...(metadata === undefined ? {} : { metadata }) };
}

/**
 * The environment as envconfig should see it: an empty variable counts as unset (except
 * TEMPORAL_GRPC_META_*, where empty removes a header), the old TLS names map to the CLI's, and
 * TEMPORAL_TLS must be a boolean (envconfig would take any other word for false).
 */
function cleanEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const vars = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && (entry[1].trim() !== '' || entry[0].startsWith('TEMPORAL_GRPC_META_'))));
  for (const [old, name] of Object.entries(OLD_NAMES)) if (vars[old] !== undefined) vars[name] ??= vars[old];
  const flag = vars.TEMPORAL_TLS?.trim().toLowerCase();
  if (flag !== undefined && !['1', 't', 'true', '0', 'f', 'false'].includes(flag)) {
    throw new TemporalConfigError(`Invalid TEMPORAL_TLS: expected true or false (got "${vars.TEMPORAL_TLS}")`, 'TEMPORAL_TLS');
  }
  if (flag !== undefined) vars.TEMPORAL_TLS = String(['1', 't', 'true'].includes(flag));
  return vars;
}

/** envconfig's default file, named in messages: `temporalio/temporal.toml` in the user's config folder. */
function defaultConfigFile(env: Record<string, string>): string | undefined {
  const { HOME: home, APPDATA: appData, XDG_CONFIG_HOME: xdg } = env;
  const dir = process.platform === 'win32' ? appData : process.platform === 'darwin' ? home && path.join(home, 'Library', 'Application Support') : (xdg ?? (home && path.join(home, '.config')));
  return dir ? path.join(dir, 'temporalio', 'temporal.toml') : undefined;
}
