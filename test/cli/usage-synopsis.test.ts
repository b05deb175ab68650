/**
 * The top-level help's synopsis of each command names every option the command's own help lists, so that a new
 * option cannot be left out of one of them.
 */
import { describe, expect, it } from 'vitest';
import { CLI_USAGE, runCli } from '../../src/cli/run-cli.js';

async function ownHelp(command: string): Promise<string> {
  let out = '';
  const io = {
    stdout: (s: string) => {
      out += s;
    },
    stderr: () => {},
  };
  expect(await runCli([command, '--help'], io)).toBe(0);
  return out;
}

/** The text of one command's entry under "Commands:", up to the next command or the options. */
function synopsis(command: string): string {
  const lines = CLI_USAGE.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`  ${command} `));
  expect(start).toBeGreaterThan(0);
  const end = lines.findIndex((line, i) => i > start && (/^ {2}\S/.test(line) || line === ''));
  return lines.slice(start, end).join('\n');
}

describe('the top-level help', () => {
  it.each(['check', 'flaky-server'])('lists every option of %s', async (command) => {
    // Each option as the command's help lists it: `--json`, or `-I, --proto-path` (either form will do).
    const options = [...(await ownHelp(command)).matchAll(/^ {2}(?:(-[A-Za-z]), )?(--[a-z][a-z-]*)/gm)]
      .map((match) => ({ short: match[1], long: match[2] as string }))
      .filter(({ long }) => long !== '--help' && long !== '--version');
    expect(options.length).toBeGreaterThan(3);
    const text = synopsis(command);
    const named = (option: string | undefined) =>
      option !== undefined && new RegExp(`(^|[\\s\\[])${option}(?![a-z-])`).test(text);
    const missing = options
      .filter(({ short, long }) => !named(long) && !named(short))
      .map(({ long }) => long);
    expect(missing).toEqual([]);
  });
});
