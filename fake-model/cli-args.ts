/** Command-line options of the fake model server's own command (cli.ts). */
import type { ContextErrorStyle } from './limits';

export const CLI_USAGE = 'cli.ts [--port N] [--model NAME] [--context-window N] [--max-output-tokens N] [--context-error-style openai|llamacpp] [--llama-props]';

/** Parsed command-line options. */
export interface CliOptions {
  port: number;
  model?: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  contextErrorStyle?: ContextErrorStyle;
  llamaProps?: boolean;
}

/** Parse the arguments after the script's name; throws with the usage on anything unknown or invalid. */
export function parseArgs(argv: string[]): CliOptions {
  const options: CliOptions = { port: 0 };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = argv[i + 1];
    if (arg === '--llama-props') {
      options.llamaProps = true;
      continue;
    }
    if (value === undefined) throw new Error(`unknown argument "${arg}" (usage: ${CLI_USAGE})`);
    if (arg === '--port') {
      options.port = wholeNumber(arg, value, 65535);
    } else if (arg === '--model') {
      options.model = value;
    } else if (arg === '--context-window') {
      options.contextWindow = wholeNumber(arg, value);
    } else if (arg === '--max-output-tokens') {
      options.maxOutputTokens = wholeNumber(arg, value);
    } else if (arg === '--context-error-style') {
      if (value !== 'openai' && value !== 'llamacpp') throw new Error(`--context-error-style must be openai or llamacpp, got "${value}"`);
      options.contextErrorStyle = value;
    } else {
      throw new Error(`unknown argument "${arg}" (usage: ${CLI_USAGE})`);
    }
    i += 1;
  }
  return options;
}

function wholeNumber(flag: string, value: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > max) throw new Error(`${flag} must be a whole number 0..${max}, got "${value}"`);
  return n;
}
