// What a new user meets first (issue 19), through the built binary: usage errors said once, secrets never echoed from
// argv, flag errors naming the flag, an existing keystore refused before any key derivation, amounts no payment can
// have and mistyped addresses refused before anything is sent, ETH_RPC_URL and the workspace-key default in
// `config show`, and `mcp config`. The question-text rules, the documents and the spinner, in-process:
// test/first-contact.test.ts.
import { describe, expect, it } from 'vitest';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { askBody, refusal } from './helpers/first-contact.js';
import { BIN, makeHome, registerSecret, runCli, TEST_ADDRESS } from './helpers/cli.js';

const home = makeHome();
describe('usage errors', () => {
  it('are printed once: one error line (no literal \\n), the suggestion as the hint, exit 2', async () => {
    const missing = await runCli(['quote'], home);
    expect(missing.code).toBe(2);
    expect(missing.stderr.match(/error:/g)).toHaveLength(1);
    expect(missing.stderr).toMatch(
      /^error: required option '--file <ask\.json>' not specified\nhint: run the command with --help for its usage\n$/,
    );
    const typo = await runCli(['wallet', 'neww'], home);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe("error: unknown command 'neww'\nhint: did you mean new? run the command with --help for its usage\n");
    const flag = await runCli(['--password-fil', 'x', 'wallet', 'address'], home);
    expect(flag.stderr).toBe(
      "error: unknown option '--password-fil'\nhint: did you mean --password-file? run the command with --help for its usage\n",
    );
    const json = await runCli(['--json', 'wallet', 'neww'], home);
    expect(json.code).toBe(2);
    expect(json.stderr).toBe('');
    expect(json.json().error).toMatchObject({
      code: 'unknown_command',
      message: "unknown command 'neww'",
      hint: expect.stringMatching(/did you mean new\?/),
      exitCode: 2,
    });
  });

  it('a password, key or API key on the command line is refused without echoing it, pointing at the right way', async () => {
    // Not registered as a test secret: the whole-run scan counts a secret in argv as a leak by itself. Checked here.
    const typed = 'hunter2-typed-on-argv';
    for (const argv of [
      ['wallet', 'new', `--password=${typed}`],
      ['--password', typed, 'wallet', 'new'],
      ['wallet', 'new', `--passphrase=${typed}`],
    ]) {
      const r = await runCli(['--json', ...argv], home);
      expect(r.code).toBe(2);
      expect(r.json().error).toMatchObject({
        code: 'secret_in_argv',
        message: expect.stringMatching(/^--(password|passphrase): passwords never go on the command line/),
        hint: expect.stringMatching(/--password-file FILE or --password-env NAME/),
      });
      expect(r.stdout + r.stderr).not.toContain(typed);
    }
    const key = await runCli(['--json', 'projects', 'list', `--api-key=rlk_0123456789abcdef_${typed}-aaaaaaaaaaaaaaaaaaaaaaaa`], home);
    expect(key.json().error).toMatchObject({
      code: 'secret_in_argv',
      hint: expect.stringMatching(/--api-key-file FILE .*LOOPSIGN_API_KEY_FILE/),
    });
    expect(key.stdout + key.stderr).not.toContain(typed);
  });

  it('vote inputs name the flag the user typed, not the protocol field', async () => {
    const stake = await runCli(['--json', 'rate', '--content-id', '1', '--up', '--prediction', '50', '--stake', 'abc'], home);
    expect(stake.code).toBe(2);
    expect(stake.json().error.message).toMatch(/^--stake "abc" must be/);
    const prediction = await runCli(['rate', '--content-id', '1', '--up', '--prediction', '500', '--stake', '1'], home);
    expect(prediction.code).toBe(2);
    expect(prediction.stderr).toMatch(/^error: --prediction 500 is outside 1 … 99\n/);
    expect(stake.json().error.message + prediction.stderr).not.toMatch(/stakeAmount|predictedUpPercent/);
  });
});

describe('wallet new over an existing keystore', () => {
  it('is refused before any password is read and before the key derivation runs', async () => {
    const keystore = home.file('existing-keystore.json', '{"version":3}');
    const before = readFileSync(keystore, 'utf8');
    // No password source at all: the keystore is what is wrong, so that is what is said.
    const bare = await runCli(['--json', '--keystore', keystore, 'wallet', 'new'], home);
    expect(bare.code).toBe(6);
    expect(bare.json().error.code).toBe('keystore_exists');
    // With a password: no key derivation (its progress event) happens before the refusal.
    const r = await runCli(
      ['--json', '--keystore', keystore, '--password-file', home.passwordFile('first-contact-pw-1'), 'wallet', 'new'],
      home,
    );
    expect(r.code).toBe(6);
    expect(r.json().error).toMatchObject({ code: 'keystore_exists', hint: expect.stringMatching(/--force/) });
    expect(r.stderr).not.toMatch(/keystore\.encrypt|scrypt/);
    expect(readFileSync(keystore, 'utf8')).toBe(before);
  });
});

describe('refused before anything is sent', () => {
  const quote = (body: unknown) =>
    runCli(
      [
        '--json',
        '--chain-id',
        '8453',
        '--base-url',
        'http://127.0.0.1:9',
        'quote',
        '--file',
        home.file(`q-${Math.random().toString(36).slice(2)}.json`, JSON.stringify(body)),
      ],
      home,
    );

  it('amounts no payment can have: above uint256, above a billion tokens (exit 2, the field named)', async () => {
    const huge = await quote(askBody({ maxPaymentAmount: `1${'0'.repeat(69)}` }, {}));
    expect(huge.code).toBe(2);
    expect(huge.json().error).toMatchObject({ code: 'amount_too_large', field: 'maxPaymentAmount' });
    const eight = { roundConfig: { questionDurationSeconds: '1200', minVoters: '8', maxVoters: '100' } };
    const bounty = await quote(
      askBody({
        ...eight,
        maxPaymentAmount: `1${'0'.repeat(69)}`,
        bounty: { amount: `1${'0'.repeat(69)}`, asset: 'USDC', requiredVoters: '8' },
      }),
    );
    expect(bounty.json().error).toMatchObject({
      code: 'amount_too_large',
      field: 'bounty.amount',
      message: expect.stringMatching(/above the 1000000000 USDC that any one payment may be; nothing was sent/),
    });
    const overflow = await quote(askBody({ maxPaymentAmount: (2n ** 256n).toString() }));
    expect(overflow.json().error).toMatchObject({ code: 'amount_too_large', message: expect.stringMatching(/does not fit in a uint256/) });
    // A billion USDC is still an amount (the service decides whether it is paid).
    expect(
      refusal(
        askBody({
          ...eight,
          maxPaymentAmount: (10n ** 15n).toString(),
          bounty: { amount: (10n ** 15n).toString(), asset: 'USDC', requiredVoters: '8' },
        }),
      ),
    ).toBeUndefined();
  });

  it('an address with a bad checksum in an ask file (exit 2, not an internal error)', async () => {
    const bad = TEST_ADDRESS.replace('C51812dc3A010C7d01b50e0d17dc79C8', 'c51812dc3A010C7d01b50e0d17dc79C8');
    const r = await quote(askBody({ walletAddress: bad }));
    expect(r.code).toBe(2);
    expect(r.json().error).toMatchObject({
      code: 'bad_address_checksum',
      message: expect.stringContaining(`walletAddress ${bad} has a bad checksum`),
    });
    // All lower case carries no checksum: accepted as typed.
    expect(refusal(askBody({ walletAddress: TEST_ADDRESS.toLowerCase() }))).toBeUndefined();
  });
});

describe('conventions', () => {
  it("ETH_RPC_URL is the fallback RPC URL, below loopsign's own, shown with its source (and its key hidden)", async () => {
    const secretPath = '/v2/first-contact-rpc-key-1234567890';
    registerSecret('first-contact-rpc-key-1234567890');
    const show = async (env: Record<string, string>) => (await runCli(['--json', 'config', 'show'], home, { env })).json().settings.rpcUrl;
    expect(await show({ ETH_RPC_URL: `https://eth.example${secretPath}` })).toEqual({
      value: 'https://eth.example/…',
      source: 'env ETH_RPC_URL',
    });
    expect(await show({ ETH_RPC_URL: `https://eth.example${secretPath}`, LOOPSIGN_RPC_URL: 'https://own.example' })).toEqual({
      value: 'https://own.example',
      source: 'env',
    });
    expect(await show({})).toMatchObject({ source: 'default' });
    const insecure = await runCli(['--json', 'config', 'show'], home, { env: { ETH_RPC_URL: 'http://eth.example:8545' } });
    expect(insecure.code).toBe(2);
    expect(insecure.json().error.message).toMatch(/from ETH_RPC_URL/);
  });

  it('the workspace credential file: LOOPSIGN_API_KEY_FILE, then the config key apiKeyFile, in config show', async () => {
    const env = await runCli(['--json', 'config', 'show'], home, { env: { LOOPSIGN_API_KEY_FILE: '/keys/workspace-key' } });
    expect(env.json().settings.apiKeyFile).toEqual({ value: '/keys/workspace-key', source: 'env' });
    const config = home.file('config-apikey.json', JSON.stringify({ apiKeyFile: '/keys/from-config' }));
    const file = await runCli(['--json', 'config', 'show'], home, { env: { LOOPSIGN_CONFIG: config } });
    expect(file.json().settings.apiKeyFile).toEqual({ value: '/keys/from-config', source: 'config' });
  });

  it("mcp config prints the host's JSON with the absolute node and bin of this installation, never npx", async () => {
    const pw = home.passwordFile('first-contact-pw-2');
    const bin = realpathSync(BIN);
    for (const [host, key] of [
      ['claude', 'mcpServers'],
      ['cursor', 'mcpServers'],
      ['vscode', 'servers'],
    ] as const) {
      const r = await runCli(['--json', '--password-file', pw, '--chain-id', '84532', 'mcp', 'config', '--host', host], home);
      expect(r.code, r.stderr).toBe(0);
      const server = r.json().config[key].loopsign;
      expect(server).toMatchObject({
        command: process.execPath,
        args: [bin, 'mcp'],
        env: { LOOPSIGN_CHAIN_ID: '84532', LOOPSIGN_PASSWORD_FILE: pw },
      });
      expect(path.isAbsolute(server.env.LOOPSIGN_KEYSTORE)).toBe(true);
      if (host === 'vscode') expect(server.type).toBe('stdio');
      expect(r.stdout).not.toMatch(/npx/);
    }
    // Without --json the host's document itself, ready to save.
    const text = await runCli(['--password-file', pw, 'mcp', 'config', '--host', 'cursor'], home);
    expect(JSON.parse(text.stdout).mcpServers.loopsign.args).toEqual([bin, 'mcp']);
    const bad = await runCli(['--json', 'mcp', 'config', '--host', 'emacs'], home);
    expect(bad.code).toBe(2);
    expect(bad.json().error.code).toBe('invalid_host');
  });
});
