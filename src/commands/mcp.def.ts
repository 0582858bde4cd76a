// loopsign mcp: definition (handler in mcp.ts).
import type { Command } from 'commander';
import { examples, type Lazy } from './define.js';

export interface McpConfigOptions {
  host: string;
  /** The `mcp --root` folders given before `config` (commander keeps them on the parent command). */
  root?: string[];
}

export function defineMcp(program: Command, lazy: Lazy): void {
  const mcp = program
    .command('mcp')
    .description('serve loopsign as a local MCP server on stdio for agent hosts: the same guards, journal and spending policy as the CLI')
    .option(
      '--root <dir>',
      "a folder tools may read files from, besides the host's MCP roots (repeatable); loopsign's own secrets and state never",
      (dir: string, prev: string[] = []) => [...prev, dir],
    )
    .addHelpText(
      'after',
      examples(['LOOPSIGN_PASSWORD_FILE=~/.loopsign-pass loopsign mcp', 'loopsign --chain-id 31337 --policy agent-policy.json mcp']) +
        "\nStarted by an MCP host (see docs/agents.md for its configuration); stdout carries only the protocol, the log goes to stderr.\nTools read files only under the host's roots and the --root folders.\nAbove the policy's approval threshold the user is asked through MCP elicitation; without it such a spend is refused.\nWith no policy file a built-in default applies: 5 USDC per ask, 20 USDC per 24 h on each chain, approval above 2 USDC (docs/policy.md).\n",
    )
    .action(
      lazy(
        () => import('./mcp.js'),
        (m) => m.mcp,
      ),
    );
  mcp
    .command('config')
    .description('print a ready MCP host configuration for this loopsign (absolute node and bin paths, no npx)')
    .requiredOption('--host <host>', 'claude (Claude Desktop / Claude Code), cursor or vscode')
    .addHelpText(
      'after',
      examples([
        'loopsign mcp config --host claude',
        'loopsign --chain-id 31337 --password-file ~/.loopsign-pass mcp config --host vscode > .vscode/mcp.json',
      ]) +
        "\nThe settings given now (chain, base URL, keystore, password file, sandbox manifest, policy) go into the server's env; no secret does.\n",
    )
    .action(
      lazy(
        () => import('./mcp.js'),
        (m) => (ctx, o: McpConfigOptions, args) => m.mcpConfig(ctx, { ...o, root: mcp.opts<{ root?: string[] }>().root ?? [] }, args),
      ),
    );
}
