// The feed-agent command line: `feed-agent <command> [options]`. A command is one import and one entry
// in COMMANDS; each parses its own options and prints its own help.
import { gateway } from './gateway';
import { provision } from './provision';
import { serve } from './serve';
import { simulate } from './simulate';
import { EXIT_USAGE, UsageError } from './usage';

// package.json's version, put in by the build (scripts/build.mjs).
declare const FEED_AGENT_VERSION: string;

interface Command {
  summary: string;
  /** Resolves once the command is under way (a server keeps the process alive itself). */
  run(args: string[]): Promise<void>;
}

const COMMANDS: Record<string, Command> = { serve, simulate, gateway, provision };

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return [
    'usage: feed-agent <command> [options]',
    '',
    'commands:',
    ...lines,
    '',
    'feed-agent <command> --help shows its options; feed-agent --version its version.',
    `Bad input (an unknown option, a bad value) exits with ${EXIT_USAGE} in every command.`,
  ].join('\n');
}

async function main(argv: string[]): Promise<void> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return;
  }
  if (name === '--version' || name === '-v') {
    console.log(FEED_AGENT_VERSION);
    return;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    const what = name.startsWith('-') ? 'option' : 'command';
    console.error(`feed-agent: unknown ${what} ${JSON.stringify(name)} (see feed-agent --help)`);
    process.exitCode = EXIT_USAGE;
    return;
  }
  try {
    await command.run(args);
  } catch (error) {
    console.error(`feed-agent ${name}: ${(error as Error).message}`);
    process.exitCode = error instanceof UsageError ? EXIT_USAGE : 1;
  }
}

await main(process.argv.slice(2));
