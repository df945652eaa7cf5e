// The feed-agent command line: `feed-agent <command> [options]`. A command is one import and one entry
// in COMMANDS; each parses its own options and prints its own help.
import { serve } from './serve';
import { simulate } from './simulate';

interface Command {
  summary: string;
  /** Resolves once the command is under way (a server keeps the process alive itself). */
  run(args: string[]): Promise<void>;
}

const COMMANDS: Record<string, Command> = { serve, simulate };

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return ['usage: feed-agent <command> [options]', '', 'commands:', ...lines, '', 'feed-agent <command> --help shows its options.'].join('\n');
}

async function main(argv: string[]): Promise<void> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    console.error(`feed-agent: unknown command ${JSON.stringify(name)}\n\n${usage()}`);
    process.exitCode = 2;
    return;
  }
  try {
    await command.run(args);
  } catch (error) {
    console.error(`feed-agent ${name}: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}

await main(process.argv.slice(2));
