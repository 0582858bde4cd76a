// Fee bumps (issue 35: a slot's versions are its bytes, fee bumps, and at most one cancel). A bonus approval is signed
// and journaled, and the run dies before sending it; the chain's base fee then rises past what it offers. Sent again as
// it is, it could wait for ever. The rerun signs the same calls at the same nonce with higher fees, records that version
// before sending it, and pays once: the journal's record becomes the bytes the chain mined.
import { parseTransaction } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, runCli } from './helpers/cli.js';
import { anvilRpc, fundedWallet, openSession, type Session } from './helpers/chain.js';
import { recorded, recordedOfKind, withStore } from './helpers/store.js';

let s: Session;
beforeAll(async () => {
  s = await openSession({ raters: false });
});
afterAll(async () => {
  await s.sb.stop();
});

describe('a journaled transaction the base fee left behind', () => {
  it('is bumped at its nonce on the rerun (recorded before it is sent), mined once, and the ask pays once', async () => {
    const w = await fundedWallet(s.sb, s.pub);
    const home = makeHome();
    const before = await w.usdcOf();
    const id = `fee-bump-${process.pid}-${Date.now()}`;
    const file = home.file(
      `${id}.json`,
      JSON.stringify({
        chainId: 31337,
        clientRequestId: id,
        maxPaymentAmount: '2000000',
        bounty: { amount: '1000000', asset: 'USDC', requiredVoters: '3' },
        feedbackBonus: { amount: '1000000', asset: 'USDC' },
        question: { title: `Fee bump ${id}`, contextUrl: `https://example.com/fee-bump/${id}`, categoryId: '1', tags: ['fee-bump'] },
      }),
    );
    const ask = (env: Record<string, string | undefined> = {}) =>
      runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'], home, { env: { ...w.env, ...env } });
    // The bonus's approval signed and journaled; the process dies before its broadcast.
    const killed = await ask({ LOOPSIGN_CRASH_AFTER: 'bonus:signed:0' });
    expect(killed.code, killed.stdout + killed.stderr).toBe(-1);
    const [op] = recordedOfKind(home, 'ask');
    const approval = op!.txs.find((t) => t.stage === 'bonus')!;
    expect(approval.status).toBe('signed');
    const offered = parseTransaction(approval.raw).maxFeePerGas!;
    // The base fee rises past what it offers (and stays there: an empty block lowers it by an eighth at most).
    await anvilRpc(s, 'anvil_setNextBlockBaseFeePerGas', [`0x${(offered * 4n).toString(16)}`]);
    await anvilRpc(s, 'evm_mine', []);
    expect((await s.pub.getBlock()).baseFeePerGas! > offered).toBe(true);

    // Killed again right after the bump is recorded, before it is sent: the next rerun sends that bump as it is.
    const bumpKilled = await ask({ LOOPSIGN_CRASH_AFTER: 'bump:signed' });
    expect(bumpKilled.code, bumpKilled.stdout + bumpKilled.stderr).toBe(-1);
    const rerun = await ask();
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.stderr, 'the journaled bump is sent, not signed again').not.toMatch(/"event":"tx\.bump"/);
    const versions = withStore(home, (db) => db.prepare('SELECT kind, hash FROM slot_versions').all() as { kind: string; hash: string }[]);
    expect(versions.map((v) => v.kind)).toEqual(['bump']);
    expect(versions[0]!.hash, 'the replaced bytes are kept as a version of the slot').toBe(approval.hash.toLowerCase());
    expect(before - (await w.usdcOf()), 'the bounty and the bonus, each once').toBe(2_000_000n);
    const after = recorded(home, op!.id).txs.find((t) => t.stage === 'bonus' && t.nonce === approval.nonce)!;
    expect(after.status).toBe('mined');
    expect(after.hash, 'the record names the bytes the chain holds').not.toBe(approval.hash);
    expect(parseTransaction(after.raw).maxFeePerGas! > offered * 4n).toBe(true);
    expect((await s.pub.getTransactionReceipt({ hash: after.hash })).status).toBe('success');
    expect(await s.pub.getTransaction({ hash: approval.hash }).catch(() => null), 'the underpriced bytes were never mined').toBeNull();
    // Nothing more on the rerun of the finished ask.
    const again = await ask();
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(before - (await w.usdcOf())).toBe(2_000_000n);
  });
});
