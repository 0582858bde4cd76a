// The output contract and exit codes, through the built binary.
import { describe, expect, it } from 'vitest';
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { makeHome, runCli } from './helpers/cli.js';

const ANSI = /\u001b\[/;

describe('loopsign CLI contract', () => {
  const home = makeHome();

  it('prints its version and help, listing every command with a description and examples', async () => {
    const version = await runCli(['--version'], home);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);

    const help = await runCli(['--help'], home);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/wallet\s+create, import/);
    expect(help.stdout).toMatch(/config\s+show the resolved/);
    expect(help.stdout).toMatch(/mcp (\[options\] +)?serve loopsign as a local MCP server/);
    expect(help.stdout).toContain('Examples:');
    expect(help.stdout).toContain('Exit codes:');
    expect(help.stdout).not.toMatch(ANSI);
  });

  it.each([
    ['wallet', 'new'],
    ['wallet', 'import'],
    ['wallet', 'address'],
    ['wallet', 'export'],
    ['wallet', 'balance'],
    ['config', 'show'],
  ])('has --help for %s %s', async (group, cmd) => {
    const r = await runCli([group, cmd, '--help'], home);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: loopsign ${group} ${cmd}`);
    expect(r.stdout).toContain('Examples:');
  });

  it('a command group without a subcommand is a usage error (exit 2)', async () => {
    const r = await runCli(['wallet'], home);
    expect(r.code).toBe(2);
  });

  it('with --json, stdout carries exactly one error document for usage errors (exit 2)', async () => {
    for (const args of [
      ['--json', 'nonsense'],
      ['--json', 'wallet', 'new', '--bogus'],
      ['--json', 'wallet', 'export'],
    ]) {
      const r = await runCli(args, home);
      expect(r.code, args.join(' ')).toBe(2);
      const doc = r.json();
      expect(doc.ok).toBe(false);
      expect(doc.error.code).toMatch(/^[a-z_]+$/);
      expect(typeof doc.error.message).toBe('string');
      expect(r.stderr).toBe('');
    }
  });

  it('refuses a password on argv: there is no such option', async () => {
    const r = await runCli(['--json', 'wallet', 'new', '--password', 'hunter22'], home);
    expect(r.code).toBe(2);
    // There is no such option; the refusal says how passwords are given instead (issue 19).
    expect(r.json().error).toMatchObject({ code: 'secret_in_argv', hint: expect.stringMatching(/--password-file/) });
    expect(r.stdout).not.toContain('hunter22');
  });

  it('refuses unknown chain ids with exit 2 whatever their source', async () => {
    const flag = await runCli(['--json', '--chain-id', '1', 'config', 'show'], home);
    expect(flag.code).toBe(2);
    expect(flag.json().error.code).toBe('unsupported_chain');
    const env = await runCli(['--json', 'config', 'show'], home, { env: { LOOPSIGN_CHAIN_ID: 'abc' } });
    expect(env.code).toBe(2);
    expect(env.json().error.code).toBe('invalid_chain_id');
  });

  it('refuses a plain-http base URL that is not loopback', async () => {
    const r = await runCli(['--json', '--base-url', 'http://example.com', 'config', 'show'], home);
    expect(r.code).toBe(2);
    expect(r.json().error.code).toBe('insecure_base_url');
  });

  it('refuses a base URL with credentials in it, without printing them (node:http would send them to the service)', async () => {
    const r = await runCli(['--json', '--base-url', 'http://agent:pw-do-not-print@127.0.0.1:9', 'templates'], home);
    expect(r.code).toBe(2);
    expect(r.json().error.code).toBe('invalid_base_url');
    expect(r.stdout + r.stderr).not.toContain('pw-do-not-print');
  });

  it('resolves settings flag > env > config file > default and says where each came from', async () => {
    const h = makeHome();
    mkdirSync(path.join(h.env.XDG_CONFIG_HOME!, 'loopsign'), { recursive: true });
    writeFileSync(
      path.join(h.env.XDG_CONFIG_HOME!, 'loopsign', 'config.json'),
      JSON.stringify({ chainId: 84532, baseUrl: 'https://config.example', rpcUrl: 'https://rpc.config.example', keystore: '/cfg/ks.json' }),
    );
    const r = await runCli(['--json', '--base-url', 'https://flag.example', 'config', 'show'], h, {
      env: { LOOPSIGN_RPC_URL: 'https://rpc.env.example', LOOPSIGN_PASSWORD: 'do-not-print-me' },
    });
    expect(r.code).toBe(0);
    const s = r.json().settings;
    expect(s.baseUrl).toEqual({ value: 'https://flag.example', source: 'flag' });
    expect(s.rpcUrl).toEqual({ value: 'https://rpc.env.example', source: 'env' });
    expect(s.chainId).toEqual({ value: 84532, source: 'config' });
    expect(s.keystore).toEqual({ value: '/cfg/ks.json', source: 'config' });
    expect(s.passwordEnv).toEqual({ value: 'LOOPSIGN_PASSWORD', source: 'default' });
    expect(s.passwordStatus.value).toBe('[set, masked]');
    expect(s.privateKeyEnv.value).toBe('[unset]');
    expect(r.stdout).not.toContain('do-not-print-me');
    expect(r.json().chain.tokens.USDC.eip712.name).toBe('USDC');
  });

  it('applies per-chain address overrides from the config file', async () => {
    const h = makeHome();
    const cfg = h.file('cfg.json', JSON.stringify({ chains: { '84532': { contracts: { contentRegistry: '0x' + '12'.repeat(20) } } } }));
    const r = await runCli(['--json', '--chain-id', '84532', 'config', 'show'], h, { env: { LOOPSIGN_CONFIG: cfg } });
    expect(r.code).toBe(0);
    expect(r.json().chain.contracts.contentRegistry).toBe('0x' + '12'.repeat(20));
    expect(r.json().chain.source).toContain('config overrides');
  });

  it('names the active service profile and where each trust anchor came from; an unknown profile is exit 2', async () => {
    const h = makeHome();
    const r = await runCli(['--json', 'config', 'show'], h);
    expect(r.json().settings.profile).toEqual({ value: 'rateloop-main-2026-08', source: 'default' });
    expect(r.json().profile).toMatchObject({ id: 'rateloop-main-2026-08', source: 'default', routes: { asks: '/api/agent/asks' } });
    expect(r.json().chain.sources).toMatchObject({
      contentRegistry: 'profile rateloop-main-2026-08',
      LREP: 'profile rateloop-main-2026-08',
      USDC: 'built-in chain table',
    });
    const cfg = h.file(
      'profile.json',
      JSON.stringify({
        profile: 'rateloop-main-2026-08',
        chains: { '84532': { contracts: { feedbackBonusEscrow: '0x' + '34'.repeat(20) } } },
      }),
    );
    const fromFile = await runCli(['--json', '--chain-id', '84532', 'config', 'show'], h, { env: { LOOPSIGN_CONFIG: cfg } });
    expect(fromFile.json().settings.profile.source).toBe('config');
    expect(fromFile.json().chain.sources.feedbackBonusEscrow).toBe('config file');
    const unknown = await runCli(['--json', 'config', 'show'], h, { env: { LOOPSIGN_PROFILE: 'rateloop-next' } });
    expect(unknown.code).toBe(2);
    expect(unknown.json().error).toMatchObject({ code: 'unknown_profile', hint: 'known profiles: rateloop-main-2026-08' });
    const sepolia = await runCli(['--json', '--chain-id', '84532', 'config', 'show'], h);
    expect(sepolia.json().chain.noDeployment).toMatch(/no published deployment/);
  });

  it('reports a broken config file in one line with exit 2', async () => {
    const h = makeHome();
    const bad = h.file('bad.json', '{"chainId": 8453, "colour": "blue"}');
    const r = await runCli(['config', 'show'], h, { env: { LOOPSIGN_CONFIG: bad } });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')[0]).toMatch(/^error: config file .*bad\.json: \(top level\): Unrecognized key/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace without --debug
  });

  it('never colours output when NO_COLOR is set or stdout is not a TTY', async () => {
    const r = await runCli(['config', 'show'], home, { env: { NO_COLOR: '1' } });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(ANSI);
    expect(r.stderr).not.toMatch(ANSI);
  });
});
