// What a new user meets first (issue 19), against a real sandbox: a terminal of 0 columns (and TERM=dumb) that
// never runs away, SIGTERM and SIGINT that end a wait with 143/130 and a line saying how to resume, lookups of
// unknown operations that are not success, mistyped addresses and a busy port that are input errors, `rate` from an
// unfunded wallet refused before anything is signed, display amounts, `sandbox fund`, token addresses, and the
// workspace commands' credential default and `next:` lines that run as printed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createPublicClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { BIN, childEnv, registerSecret, runCli, SETTLE_TIMEOUT, type Home } from './helpers/cli.js';
import { runOnPty, until } from './helpers/pty.js';
import { alive, type SandboxHandle } from './helpers/sandbox.js';
import { openSession } from './helpers/chain.js';

let sb: SandboxHandle;
let home: Home;
let n = 0;
// A raw key is a signer of its own: beside it, the sandbox's keystore would name a second one (signer_conflict).
const run = (args: string[], env: Record<string, string | undefined> = {}) =>
  runCli(args, home, {
    env: { ...sb.env(), ...(env.LOOPSIGN_PRIVATE_KEY ? { LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined } : {}), ...env },
  });

function askFile(extra: Record<string, unknown> = {}): string {
  const body = {
    chainId: 31337,
    clientRequestId: `first-contact-${process.pid}-${Date.now()}-${n++}`,
    maxPaymentAmount: '1500000',
    bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
    roundConfig: { questionDurationSeconds: '1200', minVoters: '3', maxVoters: '100' },
    question: {
      title: `Does a new user get a straight answer? (${n})`,
      contextUrl: 'https://example.com/context',
      categoryId: '1',
      tags: ['first-contact'],
    },
    ...extra,
  };
  return home.file(`${body.clientRequestId}.json`, JSON.stringify(body, null, 2));
}

/** A throwaway wallet (LOOPSIGN_PRIVATE_KEY), funded through the sandbox's control route. */
function throwaway() {
  const key = `0x${randomBytes(32).toString('hex')}` as Hex;
  registerSecret(key);
  return { key, address: privateKeyToAccount(key).address };
}

beforeAll(async () => {
  ({ sb, home } = await openSession({ autoAdvance: true, pollAfterMs: 200, rateLimits: { write: 10_000, read: 10_000, mcp: 10_000 } }));
});

afterAll(async () => {
  await sb?.stop();
});

describe('a terminal that never runs away', () => {
  it.each([
    ['0 columns', {}],
    ['0 columns and TERM=dumb', { TERM: 'dumb' }],
  ])('ask --wait on a pseudo-terminal with %s: it finishes, and its output stays small', async (_what, env) => {
    const pty = runOnPty(['ask', '--file', askFile(), '--wait', '--timeout', SETTLE_TIMEOUT], home, {
      ...sb.env(),
      TERM: 'xterm-256color',
      ...env,
    });
    try {
      const code = await Promise.race([pty.exited, new Promise<number>((r) => setTimeout(() => r(-2), 150_000))]);
      expect(pty.bytes(), pty.output().slice(0, 2000)).toBeLessThan(64 * 1024);
      expect(code, pty.output().slice(-2000)).toBe(0);
      expect(pty.output()).toMatch(/answer: /);
      expect(pty.output()).toMatch(/pays\s+1\.5 USDC \(1500000\)/);
      // Plain progress lines: no cursor movement.
      expect(pty.output()).not.toMatch(/\u001b\[1A/);
    } finally {
      pty.kill();
    }
  });
});

describe('signals end a wait: exit 143 / 130 and how to resume', () => {
  let operationKey: string;

  beforeAll(async () => {
    // An ask that stays open: no background keeper, no time jumps.
    await sb.control('/__sandbox/settings', { autoAdvance: false, keeperBackground: false });
    const r = await run(['--json', 'ask', '--file', askFile()]);
    expect(r.code, r.stderr).toBe(0);
    operationKey = r.json().operationKey;
  });

  afterAll(async () => {
    await sb.control('/__sandbox/settings', { autoAdvance: true, keeperBackground: true });
  });

  it('SIGTERM during `status --wait` on a 0-column pseudo-terminal', async () => {
    const pty = runOnPty(['status', '--operation-key', operationKey, '--wait', '--timeout', '600'], home, {
      ...sb.env(),
      TERM: 'xterm-256color',
    });
    try {
      await until(pty.output, /waiting for|next check/, 60_000);
      const pid = await pty.loopsignPid();
      process.kill(pid, 'SIGTERM');
      const code = await Promise.race([pty.exited, new Promise<number>((r) => setTimeout(() => r(-2), 30_000))]);
      expect(code, pty.output().slice(-2000)).toBe(143);
      const plain = pty.output().replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
      expect(plain).toMatch(/error: stopped by SIGTERM/);
      expect(plain).toMatch(/hint: run the same command again to resume/);
      expect(alive(pid)).toBe(false);
      expect(pty.bytes()).toBeLessThan(64 * 1024);
    } finally {
      pty.kill();
    }
  });

  it('Ctrl-C typed at a terminal while the spinner runs (`status --wait`, 100 columns): exit 130 and how to resume', async () => {
    const pty = runOnPty(
      ['status', '--operation-key', operationKey, '--wait', '--timeout', '600'],
      home,
      { ...sb.env(), TERM: 'xterm-256color' },
      1 << 20,
      { cols: 100, rows: 30 },
    );
    try {
      // A frame of the spinner: progress is drawn in place, as on a person's terminal.
      await until(pty.output, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/, 60_000);
      const pid = await pty.loopsignPid();
      pty.type('\x03');
      const code = await Promise.race([pty.exited, new Promise<number>((r) => setTimeout(() => r(-2), 30_000))]);
      expect(code, pty.output().slice(-2000)).toBe(130);
      const plain = pty.output().replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
      expect(plain).toMatch(/error: stopped by SIGINT \(Ctrl-C\)/);
      expect(plain).toMatch(/hint: run the same command again to resume/);
      expect(alive(pid)).toBe(false);
    } finally {
      pty.kill();
    }
  });

  it.each([
    ['SIGTERM', 143, 'terminated'],
    ['SIGINT', 130, 'interrupted'],
  ] as const)(
    '%s during `--json status --wait` (pipes): exit %i, one error document saying how to resume',
    async (signal, exitCode, code) => {
      const child = spawn(process.execPath, [BIN, '--json', 'status', '--operation-key', operationKey, '--wait', '--timeout', '600'], {
        cwd: home.dir,
        env: childEnv(home, sb.env()),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
      try {
        await until(() => stderr, /"event":"wait/, 60_000);
        child.kill(signal);
        const c = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 30_000))]);
        expect(c, stderr.slice(-1000)).toBe(exitCode);
        const doc = JSON.parse(stdout.trim());
        expect(doc).toMatchObject({
          ok: false,
          error: {
            code,
            exitCode,
            message: `stopped by ${signal}${signal === 'SIGINT' ? ' (Ctrl-C)' : ''}`,
            hint: expect.stringMatching(/run the same command again to resume/),
          },
        });
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    },
  );
});

describe('the truth about lookups, inputs and funds', () => {
  it('status and result of an operation the service does not know: exit 2, not success', async () => {
    const typo = `0x${'ab'.repeat(32)}`;
    for (const args of [
      ['status', '--operation-key', typo],
      ['result', '--operation-key', typo],
      ['status', '--operation-key', typo, '--wait', '--timeout', '5'],
      ['status', '--client-request-id', 'no-such-ask-first-contact'],
    ]) {
      const r = await run(['--json', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.json().error).toMatchObject({ code: 'unknown_operation', hint: expect.any(String) });
    }
    const human = await run(['status', '--operation-key', typo]);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/^error: the service knows no ask with operation key 0xabab.*\(not_found\)\nhint: check the key/);
  });

  it('an address with a bad checksum is input (exit 2 with the fix), never an internal error', async () => {
    const bad = sb.info.devWallet.address.replace(/[a-f]/, (c) => c.toUpperCase());
    expect(bad).not.toBe(sb.info.devWallet.address);
    for (const args of [
      ['wallet', 'balance', '--address', bad],
      ['status', '--client-request-id', 'x-first-contact', '--wallet', bad],
      ['rate', '--content-id', '1', '--up', '--prediction', '50', '--stake', '1', '--frontend', bad],
    ]) {
      const r = await run(['--json', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.json().error).toMatchObject({ code: 'bad_address_checksum', hint: expect.stringMatching(/copy the address again/) });
    }
  });

  it('sandbox --port on a busy port: exit 2 with the fix, nothing started', async () => {
    const busy = new URL(sb.info.baseUrl).port;
    const r = await runCli(['--json', 'sandbox', '--port', busy, '--state-dir', path.join(home.dir, 'busy-sandbox')], home, {
      timeoutMs: 60_000,
    });
    expect(r.code).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'port_in_use', hint: expect.stringMatching(/another --port/) });
  });

  it('rate from a wallet without ETH, or without the LREP of its stake: exit 4 before anything is signed', async () => {
    const pub = createPublicClient({ transport: http(sb.info.rpcUrl) });
    const content = String((await sb.control('/__sandbox/content', {})).contentId);
    const noEth = throwaway();
    await sb.control('/__sandbox/fund', { address: noEth.address, lrep: '5000000' });
    const a = await run(['--json', 'rate', '--content-id', content, '--up', '--prediction', '60', '--stake', '2'], {
      LOOPSIGN_PRIVATE_KEY: noEth.key,
    });
    expect(a.code, a.stdout).toBe(4);
    expect(a.json().error).toMatchObject({
      code: 'insufficient_funds',
      message: expect.stringMatching(/ETH for gas .*nothing was signed/),
      hint: expect.stringMatching(/sandbox fund/),
    });
    expect(await pub.getTransactionCount({ address: noEth.address })).toBe(0);
    const noLrep = throwaway();
    await sb.control('/__sandbox/fund', { address: noLrep.address, eth: '1' });
    const b = await run(['--json', 'rate', '--content-id', content, '--down', '--prediction', '40', '--stake', '2'], {
      LOOPSIGN_PRIVATE_KEY: noLrep.key,
    });
    expect(b.code, b.stdout).toBe(4);
    expect(b.json().error.message).toMatch(/2 LREP for the stake \(has 0, needs 2\)/);
    expect(await pub.getTransactionCount({ address: noLrep.address })).toBe(0);
  });

  it('absurd amounts are refused locally (exit 2), not quoted', async () => {
    const r = await run(['--json', 'quote', '--file', askFile({ maxPaymentAmount: `1${'0'.repeat(69)}` })]);
    expect(r.code).toBe(2);
    expect(r.json().error.code).toBe('amount_too_large');
  });
});

describe('amounts and funding for people', () => {
  it('quote shows display amounts beside atomic units', async () => {
    const file = askFile();
    const text = await run(['quote', '--file', file]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/: 1\.5 USDC \(1500000 atomic units\)/);
    // What reaches raters: the bounty less the escrow's 3 % frontend fee (300 bps, the live default).
    expect(text.stdout).toMatch(/to raters +1\.455 USDC of the bounty, after the 3 % frontend fee/);
    const json = await run(['--json', 'quote', '--file', file]);
    expect(json.json().amounts).toEqual({
      total: { atomic: '1500000', asset: 'USDC', display: '1.5 USDC' },
      maxPaymentHint: { atomic: '1500000', asset: 'USDC', display: '1.5 USDC' },
      bountyAfterFrontendFee: { atomic: '1455000', asset: 'USDC', display: '1.455 USDC' },
    });
  });

  it('sandbox fund gives another wallet ETH and tokens in display units, each asset not named its default; wallet balance names the token contracts', async () => {
    const w = throwaway();
    // LREP is not named: it keeps its default (100), so the wallet's first `rate` has its stake (issue 36).
    const f = await run(['--json', 'sandbox', 'fund', w.address, '--usdc', '2.5', '--eth', '0.5']);
    expect(f.code, f.stdout + f.stderr).toBe(0);
    expect(f.json()).toMatchObject({ address: w.address, funded: { eth: '0.5', usdc: '2.5', lrep: '100' } });
    const b = await run(['--json', 'wallet', 'balance', '--address', w.address]);
    const by = Object.fromEntries(b.json().balances.map((x: { symbol: string }) => [x.symbol, x]));
    expect(by.ETH).toMatchObject({ atomic: '500000000000000000', tokenAddress: null });
    expect(by.USDC).toMatchObject({ atomic: '2500000', tokenAddress: sb.info.tokens.USDC.address });
    expect(by.LREP).toMatchObject({ atomic: '100000000', tokenAddress: sb.info.tokens.LREP.address });
    // 0 leaves an asset out.
    const w2 = throwaway();
    const only = await run(['--json', 'sandbox', 'fund', w2.address, '--lrep', '0', '--usdc', '0']);
    expect(only.json()).toMatchObject({ funded: { eth: '1', usdc: '0', lrep: '0' } });
    const bad = await run(['--json', 'sandbox', 'fund', w.address, '--usdc', '1.0000001']);
    expect(bad.code).toBe(2);
    expect(
      (
        await runCli(['--json', 'sandbox', 'fund', w.address], home, {
          env: { LOOPSIGN_SANDBOX_MANIFEST: path.join(home.dir, 'none.json') },
        })
      ).json().error.code,
    ).toBe('no_sandbox');
  });
});

describe('the workspace credential', () => {
  const keyFile = () => (sb.info as unknown as { workspace: { apiKeyFile: string } }).workspace.apiKeyFile;

  it('read from LOOPSIGN_API_KEY_FILE or the config key apiKeyFile when no flag names it', async () => {
    const env = await run(['--json', 'projects', 'list'], { LOOPSIGN_API_KEY_FILE: keyFile() });
    expect(env.code, env.stdout).toBe(0);
    const config = home.file('config-workspace.json', JSON.stringify({ apiKeyFile: keyFile() }));
    const file = await run(['--json', 'projects', 'list'], { LOOPSIGN_CONFIG: config });
    expect(file.code, file.stdout).toBe(0);
    const none = await run(['--json', 'projects', 'list']);
    expect(none.code).toBe(6);
    expect(none.json().error.hint).toMatch(/LOOPSIGN_API_KEY_FILE/);
  });

  it('next: lines run as printed: a key given by flag travels with them', async () => {
    const r = await run([
      'projects',
      'create',
      '--name',
      `First contact ${process.pid}`,
      '--data-classification',
      'internal',
      '--retention-days',
      '30',
      '--api-key-file',
      keyFile(),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const next = /^next: (loopsign .*)$/m.exec(r.stdout)![1]!;
    expect(next).toContain(`--api-key-file ${keyFile()}`);
    const pasted = await run(['--json', ...next.split(' ').slice(1)]);
    expect(pasted.code, pasted.stdout).toBe(0);
    const json = await run([
      '--json',
      'projects',
      'create',
      '--name',
      `First contact ${process.pid}`,
      '--data-classification',
      'internal',
      '--retention-days',
      '30',
      '--api-key-file',
      keyFile(),
    ]);
    expect(json.json().next[0]).toContain(`--api-key-file ${keyFile()}`);
  });
});
