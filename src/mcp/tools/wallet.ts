// The wallet and the spending policy: `loopsign wallet address|balance` (their documents, src/commands/wallet.ts),
// and the policy part of `config show` (read-only: no tool can change a policy; only a person editing its file can).
// With no policy file, the server enforces its built-in default (src/policy/default.ts), and says so here.
import * as z from 'zod';
import { tool } from '../call.js';
import { address, document } from '../schemas.js';

const wallet = () => import('../../commands/wallet.js');

const amount = z.string().describe('atomic units (6 decimals)');

export const walletTools = [
  tool({
    name: 'loopsign_wallet_address',
    title: 'Wallet address',
    description: 'The address of the local wallet that signs and pays.',
    input: {},
    output: document({
      address: z.string(),
      signer: z.string().describe('where the key lives: keystore, aws:…, gcp:…, rpc:…, ledger:…'),
      keystore: z.string().nullable().describe('the keystore file, when the keystore signs'),
    }),
    run: async (ctx) => (await wallet()).walletAddressDocument(ctx),
  }),
  tool({
    name: 'loopsign_wallet_balance',
    title: 'Wallet balances',
    description: 'ETH, USDC and LREP balances of the wallet (or of another address) on the configured chain.',
    input: { address: address.optional().describe('another address to show instead of the wallet') },
    output: document({
      address: z.string(),
      chainId: z.number(),
      balances: z.array(
        z.looseObject({ symbol: z.string(), atomic: z.string().nullable(), decimals: z.number(), formatted: z.string().nullable() }),
      ),
    }),
    run: async (ctx, i) => (await (await wallet()).walletBalanceDocument(ctx, i.address)).doc,
  }),
  tool({
    name: 'loopsign_policy',
    title: 'Spending policy',
    description:
      'The spending policy in force (limits, allowed chains, approval threshold; the built-in default when no policy file is set) and what each window has left; read-only.',
    input: {},
    output: document({
      chainId: z.number(),
      builtInDefault: z.boolean().describe('true: no policy file is set, and the built-in default of loopsign mcp applies'),
      howToChange: z.string().describe('how the person (never a tool) changes the policy'),
      files: z
        .array(z.looseObject({ file: z.string(), source: z.string(), policy: z.record(z.string(), z.unknown()) }))
        .describe('every policy enforced (a file, or the built-in default)'),
      remaining: z.array(
        z.looseObject({
          chainId: z.number(),
          window: z.string(),
          asset: z.string(),
          limit: amount,
          used: amount,
          left: amount,
          policy: z.string(),
        }),
      ),
    }),
    run: async (ctx) => {
      const [{ policyView }, { CHANGE_DEFAULT_POLICY, DEFAULT_POLICY_SUMMARY }] = await Promise.all([
        import('../../commands/config.js'),
        import('../../policy/default.js'),
      ]);
      const chain = (await ctx.chainSettings()).chain;
      const gate = await ctx.policy();
      const howToChange = gate.builtIn
        ? `no policy file is set, so the built-in default applies (${DEFAULT_POLICY_SUMMARY}). To change it, ${CHANGE_DEFAULT_POLICY}`
        : 'edit the policy files listed (a person, not a tool); an edit applies from the next call';
      return { chainId: chain.chainId, builtInDefault: gate.builtIn, howToChange, ...(await policyView(gate, chain)) };
    },
  }),
];
