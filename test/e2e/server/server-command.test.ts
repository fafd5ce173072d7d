import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isPortOpen } from '../../../client/server/health';
import { serverInstall, serverStart, serverStatus, serverStop } from '../../../client/server/server-command';
import { isProcessAlive, readServerState, serverStateFile } from '../../../client/server/server-state';
import { findFreePort } from '../../support/temporal-server';

interface Output {
  lines: string[];
  errors: string[];
  log(s: string): void;
  error(s: string): void;
}

/** A state folder and a captured output of a test's own (the tests that start servers run side by side). */
interface Fresh {
  stateDir: string;
  out: Output;
}

const made: string[] = [];

function fresh(): Fresh {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-servercmd-'));
  made.push(stateDir);
  const out: Output = {
    lines: [],
    errors: [],
    log(s) {
      this.lines.push(s);
    },
    error(s) {
      this.errors.push(s);
    },
  };
  return { stateDir, out };
}

afterAll(() => {
  for (const stateDir of made) {
    // A failed test must not leave a server behind.
    const state = readServerState(serverStateFile(stateDir));
    if (state !== undefined && isProcessAlive(state.pid)) process.kill(state.pid, 'SIGKILL');
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
});

async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test.concurrent('server: the foreground server runs until stopped, records itself for status, and cleans up', async () => {
  const { stateDir, out } = fresh();
  const port = await findFreePort();
  const abort = new AbortController();
  const running = serverStart({ port, headless: true, stateDir }, out, { signal: abort.signal });
  await until(() => out.lines.includes('Press Ctrl+C to stop.'));
  expect(out.lines[0]).toMatch(new RegExp(`^Temporal dev server ready at 127\\.0\\.0\\.1:${port} \\(pid \\d+\\)$`));
  expect(out.lines).toContain(`State: ${path.join(stateDir, 'temporal.db')}`);
  const pid = readServerState(serverStateFile(stateDir))?.pid as number;

  const status = { lines: [] as string[], log: (s: string) => status.lines.push(s), error: (s: string) => status.lines.push(s) };
  expect(await serverStatus({ stateDir }, status)).toBe(0);
  expect(status.lines[0]).toBe(`The embedded Temporal server is running (pid ${pid})`);

  abort.abort();
  expect(await running).toBe(0);
  expect(out.lines).toContain('Temporal dev server stopped.');
  expect(isProcessAlive(pid)).toBe(false);
  expect(await isPortOpen('127.0.0.1', port)).toBe(false);
  expect(fs.existsSync(serverStateFile(stateDir))).toBe(false);
  expect(fs.existsSync(path.join(stateDir, 'temporal.db'))).toBe(true);
});

test.concurrent('server: start --detach leaves a server with the Web UI running; status and stop find it', async () => {
  const { stateDir, out } = fresh();
  const [port, uiPort] = [await findFreePort(), await findFreePort()];
  const code = await serverStart({ detach: true, port, uiPort, stateDir }, out);
  expect(out.errors).toEqual([]);
  expect(code).toBe(0);
  const state = readServerState(serverStateFile(stateDir));
  expect(state).toMatchObject({ address: `127.0.0.1:${port}`, uiUrl: `http://localhost:${uiPort}`, dbFile: path.join(stateDir, 'temporal.db') });
  const pid = state?.pid as number;
  // Detached means its own process group, so a Ctrl+C in our terminal does not reach it.
  expect(() => process.kill(-pid, 0)).not.toThrow();
  // It runs with the fast settings, our search attributes and the SQLite pragmas, and no news fetch.
  const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  for (const arg of [
    '--ui-disable-news-fetch',
    'history.transferProcessorMaxPollRPS=1000',
    'system.enableActivityEagerExecution=true',
    'history.workflowIdReuseMinimalInterval="0s"',
    'history.timerProcessorMaxTimeShift="100ms"',
    'LoopwrightAgent=Keyword',
    'journal_mode=wal',
  ]) {
    expect(argv).toContain(arg);
  }
  expect((await fetch(`http://127.0.0.1:${uiPort}/`)).status).toBe(200);
  // The Web UI reports its own settings: the news feed fetch is off.
  const settings = (await (await fetch(`http://127.0.0.1:${uiPort}/api/v1/settings`)).json()) as { DisableNewsFetch?: boolean };
  expect(settings.DisableNewsFetch).toBe(true);

  expect(await serverStart({ detach: true, port, stateDir }, out)).toBe(1);
  expect(out.errors[0]).toContain(`already running (pid ${pid})`);

  const stopOut = { lines: [] as string[], log: (s: string) => stopOut.lines.push(s), error: (s: string) => stopOut.lines.push(s) };
  expect(await serverStop({ stateDir }, stopOut)).toBe(0);
  expect(stopOut.lines).toEqual([`Stopped the embedded Temporal server (pid ${pid}).`]);
  expect(isProcessAlive(pid)).toBe(false);
  expect(fs.existsSync(serverStateFile(stateDir))).toBe(false);
  expect(await serverStatus({ stateDir }, stopOut)).toBe(1);
  expect(await serverStop({ stateDir }, stopOut)).toBe(0);
  expect(stopOut.lines.at(-1)).toContain('No embedded Temporal server is running');
});

test('server: install uses a CLI already there, and says what failed when it cannot install one', async () => {
  const { stateDir, out } = fresh();
  const bin = path.join(stateDir, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'temporal'), '#!/bin/sh\n', { mode: 0o755 });
  expect(await serverInstall(out, { PATH: `${bin}:/usr/bin:/bin`, LOOPWRIGHT_TOOLS_DIR: path.join(stateDir, 'tools') })).toBe(0);
  expect(out.lines.at(-1)).toBe(`Temporal CLI: ${path.join(bin, 'temporal')} (on PATH)`);

  fs.rmSync(path.join(bin, 'temporal'));
  fs.writeFileSync(path.join(bin, 'python3'), '#!/bin/sh\necho "No module named venv" >&2\nexit 1\n', { mode: 0o755 });
  expect(await serverInstall(out, { PATH: `${bin}:/usr/bin:/bin`, LOOPWRIGHT_TOOLS_DIR: path.join(stateDir, 'tools') })).toBe(1);
  expect(out.errors.at(-1)).toMatch(/^creating the venv with `python3 -m venv` failed \(exited with 1\):\nNo module named venv\n/);
});
