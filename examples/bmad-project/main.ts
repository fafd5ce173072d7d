/**
 * A BMAD project as the BMAD installer leaves it: start a session of one of its agents (an agent
 * skill such as `bmad-agent-pm`, asked for as `pm`), show its persona and menu as Loopwright read
 * them, run its first menu item, and list what it saved in the project's output folder. Nothing is
 * converted: the session reads `_bmad/` and `.claude/skills/` as they are.
 *   main.ts <project folder> [agent, default pm]
 * It needs a Temporal server and a worker (see README.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { DEFAULT_TASK_QUEUE, LoopwrightClient, type SessionHandle, type SessionState } from 'loopwright';

async function main(): Promise<void> {
  const [projectArg, agentId = 'pm'] = process.argv.slice(2);
  if (!projectArg) throw new Error('usage: main.ts <project folder made by `npx bmad-method install`> [agent]');
  const project = path.resolve(projectArg);

  const config = loadClientConnectConfig();
  const connection = await Connection.connect(config.connectionOptions);
  const loopwright = new LoopwrightClient(new Client({ connection, namespace: config.namespace }), process.env.LOOPWRIGHT_TASK_QUEUE ?? DEFAULT_TASK_QUEUE);

  // The project folder is both the bundle (its agents and skills) and the {project-root} documents land under.
  const session = await loopwright.start({ bundlePath: project, agentId, projectRoot: project });
  const state = await initialised(session);
  const agent = state.agent;
  if (!agent) throw new Error(`The session did not start: ${state.error ?? state.status}`);
  console.log(`Session ${session.workflowId}: ${agent.icon ?? ''} ${agent.name}, ${agent.title}`);
  for (const command of agent.commands) console.log(`  ${command.cmd}  ${command.description}`);

  // The first menu item, by its code, as a user would type it.
  const first = agent.commands[0]?.cmd ?? 'help';
  console.log(`You: ${first}`);
  const turn = await session.send(first);
  for (const message of await session.turnMessages(turn)) {
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) console.log(`  ${call.function.name} ${call.function.arguments.slice(0, 100)}`);
  }
  console.log(`Turn ${turn.status} after ${turn.iterations} model call(s)`);
  console.log(`${agent.name}: ${turn.response ?? '(no reply)'}`);

  // BMAD's output folder (`output_folder` of _bmad/config.toml; `_bmad-output` by default).
  const output = path.join(project, '_bmad-output');
  const saved = fs.existsSync(output) ? fs.readdirSync(output, { recursive: true, encoding: 'utf8' }).filter((f) => fs.statSync(path.join(output, f)).isFile()) : [];
  console.log(`In ${output}: ${saved.length > 0 ? saved.join(', ') : 'nothing yet'}`);

  await session.end();
  await connection.close();
  if (!turn.success) process.exitCode = 1;
}

/** The session's state once the agent is initialised (it reads the project first), or has failed. */
async function initialised(session: SessionHandle): Promise<SessionState> {
  for (;;) {
    const state = await session.state();
    if (state.agent || state.status === 'failed') return state;
    await sleep(200);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
