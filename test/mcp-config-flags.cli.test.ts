// `mcp config` carries every server flag (issue 36, item 7): `mcp --root DIR config --host claude` printed a server
// without --root, so a host that declares no MCP roots (the MCP Inspector) could read no file; flags that only a flag
// sets (--allow-weak-kdf, --password-env, --debug) and the signer flags travel too.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeHome, runCli } from './helpers/cli.js';

describe('mcp config', () => {
  it('carries --root (absolute) after `mcp`, and the flags only a flag sets before it', async () => {
    const home = makeHome();
    mkdirSync(path.join(home.dir, 'work'));
    const r = await runCli(
      ['--json', '--allow-weak-kdf', '--password-env', 'MY_PW', 'mcp', '--root', 'work', '--root', home.dir, 'config', '--host', 'claude'],
      home,
    );
    expect(r.code, r.stderr).toBe(0);
    const server = r.json().config.mcpServers.loopsign;
    const args: string[] = server.args;
    const at = args.indexOf('mcp');
    expect(args.slice(1, at)).toEqual(['--allow-weak-kdf', '--password-env', 'MY_PW']);
    expect(args.slice(at + 1)).toEqual(['--root', path.join(home.dir, 'work'), '--root', home.dir]);
  });

  it('carries --signer and --from into the env', async () => {
    const home = makeHome();
    const from = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
    const r = await runCli(['--json', '--signer', 'rpc:http://127.0.0.1:9', '--from', from, 'mcp', 'config', '--host', 'cursor'], home);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().config.mcpServers.loopsign.env).toMatchObject({ LOOPSIGN_SIGNER: 'rpc:http://127.0.0.1:9', LOOPSIGN_FROM: from });
  });
});
