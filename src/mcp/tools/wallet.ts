// The wallet and the spending policy: `loopsign wallet address|balance`, and the policy part of `config show`
// (read-only: no tool can change a policy; only a person editing its file can).
import { z } from 'zod';
import type { Context } from '../../context.js';
import { tool } from '../call.js';
import { address, document } from '../schemas.js';

const wallet = () => import('../../commands/wallet.js');

/** The policies in force and what each window has left on the configured chain. */
async function policy(ctx: Context): Promise<void> {
  const [{ resolveChain }, { policyView }] = await Promise.all([import('../../chains/index.js'), import('../../commands/config.js')]);
  const chain = (await resolveChain(await ctx.config())).chain;
  const view = await policyView(await ctx.policy(), chain);
  ctx.out.result({ chainId: chain.chainId, ...view });
}

const amount = z.string().describe('atomic units (6 decimals)');

export const walletTools = [
  tool({
    name: 'loopsign_wallet_address',
    title: 'Wallet address',
    description: 'The address of the local wallet that signs and pays.',
    input: {},
    output: document({ address: z.string(), signer: z.string().describe('where the key lives: keystore, aws:…, gcp:…, rpc:…, ledger:…'), keystore: z.string().nullable().describe('the keystore file, when the keystore signs') }),
    invoke: async () => ({ handler: (await wallet()).walletAddress, options: {} }),
  }),
  tool({
    name: 'loopsign_wallet_balance',
    title: 'Wallet balances',
    description: 'ETH, USDC and LREP balances of the wallet (or of another address) on the configured chain.',
    input: { address: address.optional().describe('another address to show instead of the wallet') },
    output: document({
      address: z.string(),
      chainId: z.number(),
      balances: z.array(z.looseObject({ symbol: z.string(), atomic: z.string().nullable(), decimals: z.number(), formatted: z.string().nullable() })),
    }),
    invoke: async (i) => ({ handler: (await wallet()).walletBalance, options: { address: i.address } }),
  }),
  tool({
    name: 'loopsign_policy',
    title: 'Spending policy',
    description: 'The spending policies in force (limits, allowed chains, approval threshold) and what each window has left; read-only.',
    input: {},
    output: document({
      chainId: z.number(),
      files: z.array(z.looseObject({ file: z.string(), source: z.string(), policy: z.record(z.string(), z.unknown()) })).describe('every policy file enforced; an empty list means no policy is set'),
      remaining: z.array(z.looseObject({ chainId: z.number(), window: z.string(), asset: z.string(), limit: amount, used: amount, left: amount, policy: z.string() })),
    }),
    invoke: async () => ({ handler: policy, options: {} }),
  }),
];
