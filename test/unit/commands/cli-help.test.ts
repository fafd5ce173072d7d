import packageJson from '../../../package.json';
import { main, usage } from '../../../client/cli';
import type { CommandOutput } from '../../../client/output';

function capture(): CommandOutput & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, log: (line: string) => out.push(line), error: (line: string) => err.push(line) } as CommandOutput & { out: string[]; err: string[] };
}

const COMMANDS = ['run', 'chat', 'send', 'interrupt', 'status', 'list', 'transcript', 'approve', 'deny', 'extend', 'rewind', 'branch', 'end', 'worker', 'server', 'codec-server', 'demo', 'inspect', 'validate'];

test.each(COMMANDS)('cli: `%s --help` prints its usage, what it does and an example, and exits 0', async (name) => {
  const io = capture();
  expect(await main([name, '--help'], io)).toBe(0);
  const text = io.out.join('\n');
  expect(text).toMatch(new RegExp(`^Usage: loopwright ${name}`));
  expect(text).toContain('Example:');
  expect(text).toContain(`loopwright ${name}`);
  expect(io.err).toEqual([]);
});

test('cli: --version prints the package version; `help <command>` is the same as `<command> --help`', async () => {
  const io = capture();
  expect(await main(['--version'], io)).toBe(0);
  expect(io.out).toEqual([packageJson.version]);
  const a = capture();
  const b = capture();
  await main(['help', 'send'], a);
  await main(['send', '-h'], b);
  expect(a.out).toEqual(b.out);
  expect(usage()).toContain('--help');
});
