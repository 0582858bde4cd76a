// The wallet and the spending policy: `loopsign wallet address|balance` (their documents, src/commands/wallet.ts),
// and the policy part of `config show` (read-only: no tool can change a policy; only a person editing its file can).
// With no policy file, the server enforces its built-in default (src/policy/default.ts), and says so here.
import * as z from 'zod';
import { tool } from '../call.js';
import { address, document } from '../schemas.js';
import { budgetShowShape } from '../../budget/show-request.js';

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
  tool({
    name: 'loopsign_budget',
    title: 'On-chain budget',
    description:
      "The owner's on-chain budget for this wallet, read from the chain now: per grant its status, and per UTC day and per 30 days the cap, used, available (USDC atomic units) and reset. The chain enforces it whatever the policy says; read-only.",
    input: budgetShowShape,
    output: document({
      chainId: z.number(),
      grants: z
        .array(
          z.looseObject({
            grant: z.string().describe("the delegation's hash (the grant's id)"),
            status: z
              .enum(['active', 'expired', 'revoked_disabled', 'revoked_nonce'])
              .describe('expired or revoked_*: nothing more can be pulled; only the owner can grant again'),
            owner: z.string(),
            session: z.string().describe('the address that may pull: the agent wallet'),
            tokenAddress: z.string().describe("the token's address (USDC or LREP)"),
            expiresAt: z.number().describe('unix seconds'),
            expiresAtIso: z.string(),
            chainTime: z.number().describe("the chain's latest block time, unix seconds"),
            windows: z.array(
              z.looseObject({
                window: z.enum(['day', '30days']),
                cap: amount,
                used: amount,
                available: amount,
                resetsAt: z.number().describe('unix seconds: when this window starts again'),
                resetsAtIso: z.string(),
              }),
            ),
          }),
        )
        .describe(
          'every grant recorded on this machine (or the one file named); none imported is the error budget_no_grant (the owner runs `loopsign budget grant`, this machine `loopsign budget import`); a paused DelegationManager is budget_unavailable (try later)',
        ),
    }),
    run: async (ctx, i) => {
      const { budgetShowDocument } = await import('../../commands/budget.js');
      const grant = i.grant === undefined ? undefined : await ctx.files.check(i.grant, 'the grant file');
      return budgetShowDocument(ctx, grant === undefined ? {} : { grant });
    },
  }),
];
