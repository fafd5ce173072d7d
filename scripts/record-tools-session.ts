/**
 * The session `record-history.ts --tools` records: a custom tool and the tools of two real MCP
 * servers (filesystem and everything, over stdio), a read-only MCP call, a write that waits for
 * approval and is approved, a tool list refreshed between turns, an interrupted MCP call.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, type CustomTool } from '../activities/tools/custom-tool';
import type { McpServerConfig } from '../common/offered-tools';
import type { LoopwrightClient } from '../client/session-client';
import { type FakeOpenAI, text, toolCalls } from '../fake-model/server';
import { approveUpdate } from '../common/contract/session-definitions';

const SERVERS = path.resolve(__dirname, '../node_modules/@modelcontextprotocol');

/** The custom tool of the recording. */
export function recordingTools(): CustomTool[] {
  return [
    defineTool({
      name: 'get_weather',
      description: 'The weather in a city today',
      parameters: z.object({ city: z.string() }),
      access: 'read',
      target: 'city',
      run: ({ city }) => `Sunny in ${city}`,
    }),
  ];
}

export async function recordToolsSession(loopwright: LoopwrightClient, fake: FakeOpenAI, bundle: string, name: string): Promise<void> {
  const files = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-record-files-'));
  fs.writeFileSync(path.join(files, 'notes.txt'), 'notes\n');
  const mcpServers: Record<string, McpServerConfig> = {
    fs: { command: process.execPath, args: [path.join(SERVERS, 'server-filesystem/dist/index.js'), files] },
    everything: { command: process.execPath, args: [path.join(SERVERS, 'server-everything/dist/index.js'), 'stdio'] },
  };
  fake.enqueue(
    toolCalls([
      { id: 'call_w', name: 'get_weather', arguments: { city: 'Lisbon' } },
      { id: 'call_r', name: 'fs__read_text_file', arguments: { path: path.join(files, 'notes.txt') } },
      { id: 'call_e', name: 'everything__echo', arguments: { message: 'ping' } },
    ]),
    toolCalls([{ id: 'call_write', name: 'fs__write_file', arguments: { path: path.join(files, 'out.md'), content: '# out\n' } }]),
    text('Done.'),
    toolCalls([{ id: 'call_long', name: 'everything__trigger-long-running-operation', arguments: { duration: 30, steps: 30 } }]),
    text('Stopped.'),
  );
  try {
    const session = await loopwright.start({ bundlePath: bundle, agentId: 'facilitator', workflowId: `fixture-${name}`, mcpServers });
    const first = session.send('use the tools');
    for (let i = 0; i < 400 && (await session.state()).pendingApprovals.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    await session.workflow.executeUpdate(approveUpdate, { args: ['call_write'] });
    if (!(await first).success) throw new Error('the first turn failed');
    await session.refreshTools();
    const second = session.send('take long');
    for (let i = 0; i < 400 && (await session.state()).runningTools.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    await session.interrupt('recording an interrupted MCP call');
    if ((await second).status !== 'interrupted') throw new Error('the second turn was not interrupted');
    if (!(await session.send('go on')).success) throw new Error('the third turn failed');
    await session.end();
    await session.result();
  } finally {
    fs.rmSync(files, { recursive: true, force: true });
  }
}
