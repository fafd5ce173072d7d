/**
 * A worker of your own that adds Loopwright with `LoopwrightPlugin`: the session workflow, its
 * activities and a custom tool (`get_ticket`). It then starts one session that also has an MCP
 * server (the reference filesystem server over notes/), asks a question that needs both, prints
 * the reply, and stops. A long-lived worker would call `worker.run()` instead of `runUntil`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { DEFAULT_TASK_QUEUE, LoopwrightClient } from 'loopwright';
import { LoopwrightPlugin } from 'loopwright/worker';
import { getTicket } from './ticket-tool';

async function main(): Promise<void> {
  // The SDK logs every worker state change at INFO; warnings and errors are enough here.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const config = loadClientConnectConfig();
  const taskQueue = process.env.LOOPWRIGHT_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;
  const workerConnection = await NativeConnection.connect(config.connectionOptions);
  const worker = await Worker.create({
    connection: workerConnection,
    namespace: config.namespace,
    taskQueue,
    // The model is read from OPENAI_API_KEY / OPENAI_BASE_URL (and LOOPWRIGHT_MODEL): on the worker, not the client.
    plugins: [new LoopwrightPlugin({ tools: [getTicket], model: { defaultModel: process.env.LOOPWRIGHT_MODEL ?? 'gpt-4o-mini' } })],
  });

  const notes = path.join(__dirname, 'notes');
  const connection = await Connection.connect(config.connectionOptions);
  const loopwright = new LoopwrightClient(new Client({ connection, namespace: config.namespace }), taskQueue);

  // Run the worker until the session below has ended.
  const reply = await worker.runUntil(async () => {
    const bundlePath = path.join(path.dirname(require.resolve('loopwright/package.json')), 'bundles', 'requirements-facilitator');
    const session = await loopwright.start({
      bundlePath,
      agentId: 'facilitator',
      // The project, where documents would be saved: a scratch folder (the notes are only read).
      projectRoot: fs.mkdtempSync(path.join(os.tmpdir(), 'loopwright-worker-plugin-')),
      // Only these tools, by name or pattern: the custom tool and the MCP server's reads (without a list, every tool is offered).
      tools: ['get_ticket', 'notes__read_*', 'notes__list_directory'],
      // MCP servers as in .mcp.json: a stdio command the worker starts (a project's own .mcp.json is read too).
      // Here the filesystem server installed beside this program, the same as `npx -y @modelcontextprotocol/server-filesystem <dir>`.
      mcpServers: {
        notes: { command: process.execPath, args: [require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'), notes], cwd: notes },
      },
    });
    const turn = await session.send('Read kickoff.md with the notes server, look up the tickets it names with get_ticket, and tell me in two lines what to build first.');
    // The tools the session offered: built-in, custom (`get_ticket`) and MCP (`notes__read_text_file`, ...).
    const offered = (await session.state()).tools ?? [];
    for (const kind of ['custom', 'mcp', 'builtin'] as const) {
      const names = offered.filter((tool) => tool.kind === kind).map((tool) => tool.name);
      if (names.length > 0) console.log(`${kind} tools: ${names.join(', ')}`);
    }
    for (const message of await session.turnMessages(turn)) {
      if (message.role === 'assistant') for (const call of message.tool_calls ?? []) console.log(`  called ${call.function.name} ${call.function.arguments}`);
    }
    await session.end();
    return turn;
  });
  console.log(`Turn ${reply.status} after ${reply.iterations} model call(s)`);
  console.log(`Reply: ${reply.response ?? '(none)'}`);
  await connection.close();
  await workerConnection.close();
  if (!reply.success) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
