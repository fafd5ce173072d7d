import * as path from 'node:path';
import { startDevServer } from './dev-server';
import type { DevServerHandle } from './dev-server';
import { DevServerStartError } from './errors';
import { checkTemporal } from './health';
import { defaultStateDir } from './project-paths';
import { isProcessAlive, readServerState, removeServerState, serverStateFile } from './server-state';
import { readTemporalEnv } from './temporal-env';
import type { TemporalSettings } from './temporal-env';

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
  /** State folder for the embedded server (default LOOPWRIGHT_STATE_DIR, else `<repo>/.loopwright`). */
  stateDir?: string;
  /** Receives one human-readable line when an embedded server is started. */
  log?: (line: string) => void;
  /** Tools folder for finding or installing the CLI. */
  toolsDir?: string;
  /** Local port probed and used for the embedded server (default 7233; tests use a free one). */
  port?: number;
  /** Web UI port of the embedded server (default 8233). */
  uiPort?: number;
}

/** The Temporal server to use, and how it was obtained. */
export interface TemporalTarget extends TemporalSettings {
  /** True when the server is Loopwright's own dev server (started now or found by its pid file). */
  embedded: boolean;
  /** True when this call started it. */
  started: boolean;
  /** Web UI address, when known. */
  uiUrl?: string;
  /** Server process id, when Loopwright started it. */
  pid?: number;
  /** The handle, when this call started the server (detached: it keeps running after stop() is not called). */
  server?: DevServerHandle;
}

/**
 * Finds the Temporal server to use: TEMPORAL_ADDRESS (and its TLS and API-key settings) when set;
 * else Loopwright's embedded server if its pid file names a live one; else whatever answers on
 * localhost:7233 (or `port`); else starts the embedded dev server detached (SQLite in the state folder, Web UI
 * on 8233) and reports it through `log`.
 */
export async function ensureTemporal(options: EnsureTemporalOptions = {}): Promise<TemporalTarget> {
  const env = options.env ?? process.env;
  const settings = readTemporalEnv(env);
  if (settings.address !== undefined) {
    return { ...settings, address: settings.address, embedded: false, started: false };
  }
  const namespace = settings.namespace;
  const stateDir = path.resolve(options.stateDir ?? defaultStateDir(env));
  const stateFile = serverStateFile(stateDir);
  const port = options.port ?? EMBEDDED_PORT;
  const localAddress = `localhost:${port}`;

  const recorded = readServerState(stateFile);
  if (recorded !== undefined) {
    if (isProcessAlive(recorded.pid) && (await checkTemporal({ address: recorded.address }, namespace)) === undefined) {
      return { address: recorded.address, namespace, embedded: true, started: false, uiUrl: recorded.uiUrl, pid: recorded.pid };
    }
    // The recorded server died (machine restart, kill -9): the file only misleads from now on.
    if (!isProcessAlive(recorded.pid)) removeServerState(stateFile);
  }

  if ((await checkTemporal({ address: localAddress }, namespace)) === undefined) {
    return { address: localAddress, namespace, embedded: false, started: false };
  }

  let server: DevServerHandle;
  try {
    server = await startDevServer({
      dbFile: path.join(stateDir, 'temporal.db'),
      logFile: path.join(stateDir, 'temporal.log'),
      stateFile,
      port,
      uiPort: options.uiPort ?? EMBEDDED_UI_PORT,
      ui: true,
      namespace,
      detached: true,
      env,
      toolsDir: options.toolsDir,
    });
  } catch (error) {
    // Another command may have started the same server a moment earlier and won the port.
    if (error instanceof DevServerStartError && (await checkTemporal({ address: localAddress }, namespace)) === undefined) {
      return { address: localAddress, namespace, embedded: false, started: false };
    }
    throw error;
  }
  const ui = server.uiUrl === undefined ? '' : ` — Web UI ${server.uiUrl}`;
  options.log?.(
    server.detached
      ? `Started the embedded Temporal server (pid ${server.pid})${ui}; stop it with \`loopwright server stop\``
      : `Started the embedded Temporal server${ui}; it stops when this command exits`,
  );
  return {
    address: server.address,
    namespace,
    embedded: true,
    started: true,
    uiUrl: server.uiUrl,
    pid: server.pid,
    server,
  };
}
