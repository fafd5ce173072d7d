/**
 * Runs the command line in this process with its output captured, for the command tests. A test
 * file's jest.mock calls apply here too: this module loads the command line in that file's registry.
 */
import { main } from '../../../cli/cli';
import type { CommandOutput } from '../../../cli/output';

/** A command output that keeps every line. */
export function capture(): CommandOutput & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, log: (line: string) => out.push(line), error: (line: string) => err.push(line) };
}

/** Run `loopwright <args>` and return its exit status and output. */
export async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = capture();
  const code = await main(args, io);
  return { code, stdout: io.out.join('\n'), stderr: io.err.join('\n') };
}
