import * as path from 'node:path';
import { type DevServer, spawnDevServer } from './dev-server';
import { DevServerStartError } from './errors';
import { findTemporalCli } from './find-temporal';
import { checkTemporal } from './health';
import { defaultStateDir } from './project-paths';
import { isProcessAlive, readServerState, removeServerState, serverStateFile } from './server-state';
import { readTemporalEnv, type TemporalSettings } from './temporal-env';

/** Where the embedded server listens by default, as the Temporal CLI does. */
export const EMBEDDED_PORT = 7233;
/** Default Web UI port of the embedded server. */
export const EMBEDDED_UI_PORT = 8233;
/** Address probed before starting the embedded server. */
export const LOCAL_ADDRESS = `localhost:${EMBEDDED_PORT}`;

/** Options for {@link ensureTemporal}. */
export interface EnsureTemporalOptions {
  /** Environment to read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** State folder of the embedded server (default LOOPWRIGHT_STATE_DIR, else `.loopwright/` or `~/.loopwright/state`). */
  stateDir?: string;
  /** Receives one line when the embedded server is started. */
  log?: (line: string) => void;
  /** Port probed and used for the embedded server (default 7233; tests use a free one). */
  port?: number;
  /** Web UI port of the embedded server (default 8233). */
  uiPort?: number;
}

/** The Temporal server to use, and how it was obtained. */
export interface TemporalTarget extends TemporalSettings {
  address: string;
  /** True when it is Loopwright's embedded server (started now, or found by its pid file). */
  embedded: boolean;
  /** True when this call started it. */
  started: boolean;
  uiUrl?: string;
  pid?: number;
  /** The server, when this call started it (detached: it keeps running). */
  server?: DevServer;
}

/**
 * Finds the Temporal server to use: the address that TEMPORAL_ADDRESS, the profile or the config
 * file gives (with its TLS, API key and metadata); else the embedded server its pid file names; else
 * whatever answers on localhost:7233 (or `port`); else it starts the embedded server detached (SQLite
 * in the state folder, Web UI on 8233) with the CLI already on this machine, and says so via `log`.
 */
export async function ensureTemporal(options: EnsureTemporalOptions = {}): Promise<TemporalTarget> {
  const env = options.env ?? process.env;
  const settings = readTemporalEnv(env);
  if (settings.address !== undefined) return { ...settings, address: settings.address, embedded: false, started: false };
  const { namespace } = settings;
  const stateDir = path.resolve(options.stateDir ?? defaultStateDir(env));
  const stateFile = serverStateFile(stateDir);
  const recorded = readServerState(stateFile);
  if (recorded !== undefined) {
    if (!isProcessAlive(recorded.pid)) removeServerState(stateFile, recorded.pid);
    else if ((await checkTemporal(recorded.address, namespace)) === undefined) {
      return { address: recorded.address, namespace, embedded: true, started: false, uiUrl: recorded.uiUrl, pid: recorded.pid };
    }
  }
  const localAddress = `localhost:${options.port ?? EMBEDDED_PORT}`;
  if ((await checkTemporal(localAddress, namespace)) === undefined) return { address: localAddress, namespace, embedded: false, started: false };

  const cli = findTemporalCli({ env });
  let server: DevServer;
  try {
    server = await spawnDevServer({ cliPath: cli.path, stateDir, port: options.port ?? EMBEDDED_PORT, uiPort: options.uiPort ?? EMBEDDED_UI_PORT, namespace, detached: true, env });
  } catch (error) {
    // Another command may have started the same server a moment earlier and won the port.
    if (error instanceof DevServerStartError && (await checkTemporal(localAddress, namespace)) === undefined) {
      return { address: localAddress, namespace, embedded: false, started: false };
    }
    throw error;
  }
  options.log?.(`Started the embedded Temporal server (pid ${server.pid}) — Web UI ${server.uiUrl}; stop it with \`loopwright server stop\``);
  return { address: server.address, namespace, embedded: true, started: true, uiUrl: server.uiUrl, pid: server.pid, server };
}
