/**
 * The worker's MCP client: `.mcp.json` and its variables, the names the model sees, and the pool of
 * connections the `listTools` and `callMcpTool` activities use.
 */
export { McpConfigError, MAX_MCP_CONFIG_BYTES, MCP_CONFIG_FILE, MCP_SERVER_NAME_PATTERN, parseMcpConfig, parseMcpServers, readMcpConfig, readProjectMcpConfig } from './mcp-config';
export { expandServerVariables, expandVariables, isHttpServer, isStdioServer, type ExpandedServer, type VariableSource } from './mcp-variables';
export { mcpToolName } from './mcp-names';
export { toListedTools, toolParameters, toToolResult, type McpListedTool, type McpToolAnnotations, type McpToolListing } from './mcp-result';
export { McpServerError, STDERR_TAIL_BYTES } from './mcp-connection';
export { abortReason, type McpCallOptions, type McpProgress } from './mcp-call';
export { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_IDLE_MS, McpPool, type McpConnectionInfo, type McpPoolOptions } from './mcp-pool';
export { closeDefaultMcpPool, defaultMcpPool } from './default-pool';
