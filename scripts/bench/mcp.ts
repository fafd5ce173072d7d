/**
 * What Loopwright's MCP client adds to a tool call: N `echo` calls to server-everything over stdio
 * (from node_modules), made directly through one SDK `Client` and through the worker's pool
 * (`McpPool.callTool`: pool lookup, argument check, progress and cancellation wiring, result
 * conversion and redaction), alternating call by call so both see the same machine. Each server
 * is started and warmed up before timing; every result is checked. `ts-node scripts/bench/mcp.ts`
 * runs this part alone.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpPool } from '../../activities/mcp';
import type { McpStdioServer } from '../../common/offered-tools';
import { median, quantile, summarize, type SampleSummary } from './stats';
import { ms, textTable } from './text-table';

const ROOT = path.resolve(__dirname, '../..');
const EVERYTHING: McpStdioServer = { command: path.join(ROOT, 'node_modules', '.bin', 'mcp-server-everything'), args: ['stdio'] };

/** The MCP part of the report. */
export interface McpBenchFigures {
  calls: number;
  warmup: number;
  /** Milliseconds per call, through one SDK client. */
  direct: SampleSummary;
  /** Milliseconds per call, through `McpPool.callTool`. */
  pooled: SampleSummary;
  /** Median and p95 of pooled minus direct, call by call (ms). */
  overhead: { median: number; p95: number };
  /** Time to start server-everything and complete `initialize` (the pool's first call, ms). */
  firstConnectMs: number;
}

export interface McpBenchOptions {
  calls?: number;
  warmup?: number;
  progress?: (line: string) => void;
}

/** Times `calls` echo calls each way, after `warmup` untimed ones; stops both servers before returning. */
export async function measureMcpOverhead(options: McpBenchOptions = {}): Promise<McpBenchFigures> {
  const calls = options.calls ?? 200;
  const warmup = options.warmup ?? 20;
  const message = 'loopwright bench';
  const expected = `Echo: ${message}`;
  options.progress?.(`mcp: ${calls} echo calls to server-everything over stdio, direct and through the pool`);

  const client = new Client({ name: 'loopwright-bench', version: '0' });
  const transport = new StdioClientTransport({ command: EVERYTHING.command, args: EVERYTHING.args, stderr: 'ignore' });
  const pool = new McpPool();
  const projectRoot = os.tmpdir();
  try {
    await client.connect(transport);
    const direct = async () => {
      const result = (await client.callTool({ name: 'echo', arguments: { message } })) as CallToolResult;
      const first = result.content[0];
      if (first?.type !== 'text' || first.text !== expected) throw new Error(`direct echo returned ${JSON.stringify(result)}`);
    };
    const pooled = async () => {
      const result = await pool.callTool('everything', EVERYTHING, projectRoot, 'echo', { message }, { retrySafe: true });
      if (!result.success || result.content !== expected) throw new Error(`pooled echo returned ${JSON.stringify(result)}`);
    };
    const connectStarted = performance.now();
    await pooled();
    const firstConnectMs = performance.now() - connectStarted;
    for (let i = 0; i < warmup; i++) {
      await direct();
      await pooled();
    }
    const directMs: number[] = [];
    const pooledMs: number[] = [];
    const time = async (fn: () => Promise<void>, into: number[]) => {
      const started = performance.now();
      await fn();
      into.push(performance.now() - started);
    };
    for (let i = 0; i < calls; i++) {
      // Alternate which goes first, so neither always follows the other's garbage.
      if (i % 2 === 0) {
        await time(direct, directMs);
        await time(pooled, pooledMs);
      } else {
        await time(pooled, pooledMs);
        await time(direct, directMs);
      }
    }
    const differences = pooledMs.map((p, i) => p - directMs[i]!);
    return {
      calls,
      warmup,
      direct: summarize(directMs),
      pooled: summarize(pooledMs),
      overhead: { median: median(differences), p95: quantile(differences, 0.95) },
      firstConnectMs,
    };
  } finally {
    await client.close().catch(() => undefined);
    await pool.closeAll();
  }
}

/** The figures as a table. */
export function formatMcpOverhead(f: McpBenchFigures): string {
  return [
    `MCP tool calls: ${f.calls} echo calls to server-everything over stdio (node_modules), alternating direct and pooled,` +
      ` after ${f.warmup} warm-up calls each; the pool's first call (start + initialize) took ${ms(f.firstConnectMs, 0)} ms`,
    textTable(
      ['path', 'median ms', 'p95 ms', 'min ms', 'max ms'],
      [
        ['SDK Client.callTool (direct)', ms(f.direct.median, 3), ms(f.direct.p95, 3), ms(f.direct.min, 3), ms(f.direct.max, 3)],
        ['McpPool.callTool (pool + conversion)', ms(f.pooled.median, 3), ms(f.pooled.p95, 3), ms(f.pooled.min, 3), ms(f.pooled.max, 3)],
        ['overhead (pooled - direct, per call)', ms(f.overhead.median, 3), ms(f.overhead.p95, 3), '', ''],
      ],
    ),
  ].join('\n');
}

if (require.main === module) {
  measureMcpOverhead({ progress: (line) => process.stderr.write(`bench: ${line}\n`) }).then(
    (figures) => process.stdout.write(`${formatMcpOverhead(figures)}\n`),
    (error: unknown) => {
      process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
