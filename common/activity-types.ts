import type { ToolResult } from './messages';
import type { ModelCallInput, ModelCallResult } from './model-call';
import type { RuntimeContext } from './runtime-context';
import type { InitializeResult } from './session-types';

/** Input of the agent-initialisation activity. */
export interface InitializeAgentActivityInput {
  bundlePath: string;
  agentId: string;
  outputRoots?: string[];
}

/**
 * The activities a session calls, by their registered names (the Web UI shows these names). The
 * workflow imports only this type; the worker supplies the implementation.
 */
export interface SessionActivities {
  initializeAgent(input: InitializeAgentActivityInput): Promise<InitializeResult>;
  callModel(input: ModelCallInput): Promise<ModelCallResult>;
  read_file(ctx: RuntimeContext, args: unknown): Promise<ToolResult>;
  execute_workflow(ctx: RuntimeContext, args: unknown): Promise<ToolResult>;
  save_output(ctx: RuntimeContext, args: unknown): Promise<ToolResult>;
}
