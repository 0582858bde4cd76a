// loopsign mcp: serve the tools until the host closes the session (docs/agents.md); `mcp config` prints the host's
// configuration for this very installation.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { packageFile } from '../package-root.js';
import type { McpConfigOptions } from './mcp.def.js';

export async function mcp(ctx: Context, options: { root?: string[] }): Promise<void> {
  const { serveMcp } = await import('../mcp/server.js');
  const { promises: fs } = await import('node:fs');
  const { UsageError } = await import('../errors.js');
  for (const root of options.root ?? []) {
    const stat = await fs.stat(root).catch(() => undefined);
    if (!stat?.isDirectory())
      throw new UsageError('invalid_root', `--root ${root} is not a folder`, { hint: 'give a folder the agent may read files from' });
  }
  await serveMcp(ctx, { roots: options.root ?? [] });
}

// Where each host reads its servers, and under which key.
const HOSTS = {
  claude: { key: 'mcpServers', file: 'claude_desktop_config.json (Claude Desktop), or .mcp.json in a project (Claude Code)' },
  cursor: { key: 'mcpServers', file: '~/.cursor/mcp.json, or .cursor/mcp.json in a project' },
  vscode: { key: 'servers', file: '.vscode/mcp.json in a workspace (or the user-level mcp.json)' },
} as const;

/**
 * The host's JSON for this installation: the absolute path of the node running now and of this package's bin, never
 * `npx` (the package name is not published: whoever published it would run with the wallet password in reach). The
 * settings in force now that came from a flag or the environment go into `env`; secrets never do (a password file's
 * path does, the password does not).
 */
export async function mcpConfig(ctx: Context, options: McpConfigOptions, _args?: unknown[]): Promise<void> {
  const host = String(options.host) as keyof typeof HOSTS;
  if (!Object.hasOwn(HOSTS, host)) throw new UsageError('invalid_host', `--host ${String(options.host)} must be claude, cursor or vscode`);
  const config = await ctx.config();
  const bin = realpathSync(packageFile('bin', 'loopsign.js'));
  const env: Record<string, string> = { LOOPSIGN_CHAIN_ID: String(config.chainId.value) };
  const abs = (p: string) => path.resolve(p);
  if (config.baseUrl.value !== undefined) env.LOOPSIGN_BASE_URL = config.baseUrl.value;
  env.LOOPSIGN_KEYSTORE = abs(config.keystore.value);
  if (config.passwordFile.value !== undefined) env.LOOPSIGN_PASSWORD_FILE = abs(config.passwordFile.value);
  if (config.sandboxManifest.value !== undefined && config.chainId.value === 31337)
    env.LOOPSIGN_SANDBOX_MANIFEST = abs(config.sandboxManifest.value);
  if (config.configFile.source !== 'default') env.LOOPSIGN_CONFIG = abs(config.configFile.value);
  if (typeof ctx.flags.policy === 'string') env.LOOPSIGN_POLICY = abs(ctx.flags.policy);
  else if (ctx.env.LOOPSIGN_POLICY) env.LOOPSIGN_POLICY = abs(ctx.env.LOOPSIGN_POLICY);
  // The folders (src/paths.ts): the host starts the server without this shell's variables, and without them it would
  // read another config folder (its policy.json, its config file) and keep its spending in another database, whose
  // limits and claims the CLI's runs would not see. An empty one names the default folder: nothing to carry.
  for (const name of ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME'] as const) {
    const value = ctx.env[name];
    if (value) env[name] = abs(value);
  }
  // What only a flag sets travels as one, before or after `mcp` as the server reads it: a host that declares no MCP
  // roots (the MCP Inspector) reads files only under the --root folders.
  if (config.signer.origin === 'flag' && ctx.flags.signer !== undefined) env.LOOPSIGN_SIGNER = ctx.flags.signer;
  if (config.signer.fromOrigin === 'flag' && ctx.flags.from !== undefined) env.LOOPSIGN_FROM = ctx.flags.from;
  if (config.rpcUrl.source === 'flag' || config.rpcUrl.source === 'env')
    ctx.out.warn(
      'the RPC URL is not printed (it may carry a key): add LOOPSIGN_RPC_URL to the env of the server entry yourself, or put rpcUrl in the config file',
    );
  const before = [
    ...(ctx.flags.allowWeakKdf === true ? ['--allow-weak-kdf'] : []),
    ...(typeof ctx.flags.passwordEnv === 'string' ? ['--password-env', ctx.flags.passwordEnv] : []),
    ...(ctx.flags.debug === true ? ['--debug'] : []),
  ];
  const roots = (options.root ?? []).flatMap((r) => ['--root', abs(r)]);
  const server = {
    ...(host === 'vscode' ? { type: 'stdio' } : {}),
    command: process.execPath,
    args: [bin, ...before, 'mcp', ...roots],
    env,
  };
  const document = { [HOSTS[host].key]: { loopsign: server } };
  if (config.passwordFile.value === undefined) {
    ctx.out.warn(
      'no password file is configured: the MCP server has no terminal to ask on, so add LOOPSIGN_PASSWORD_FILE (the path of a file only you can read) to env',
    );
  }
  ctx.out.note(`put this under "${HOSTS[host].key}" in ${HOSTS[host].file}`);
  ctx.out.result({ host, file: HOSTS[host].file, config: document }, () => JSON.stringify(document, null, 2));
}
