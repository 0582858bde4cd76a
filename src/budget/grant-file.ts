// The grant file (notes/agent-budget.md §2.2): what the owner hands the agent. Not a secret, but a bearer grant for
// its session address only; written mode 0600. Amounts are atomic units (strings), times unix seconds. `limits` is a
// convenience copy: every reader recomputes them from the signed caveats. One delegation per asset, each with the same
// five caveats (src/budget/terms.ts): USDC first, then LREP when the owner granted LREP caps (`--lrep-per-day`).
import * as z from 'zod';
import type { Hex } from 'viem';
import { UsageError } from '../errors.js';
import type { Address } from '../chains/table.js';
import type { Delegation } from './delegation.js';
import type { GrantLimits } from './terms.js';

export const GRANT_FILE_VERSION = 1;

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const hex = z.string().regex(/^0x([0-9a-fA-F]{2})*$/);
const atomic = z.string().regex(/^[0-9]{1,78}$/);

const grantSchema = z
  .object({
    version: z.literal(GRANT_FILE_VERSION),
    chainId: z.number().int().positive(),
    owner: address,
    session: address,
    delegationManager: address,
    deleGator: address,
    delegations: z
      .array(
        z
          .object({
            asset: z.enum(['USDC', 'LREP']),
            hash: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
            delegation: z
              .object({
                delegate: address,
                delegator: address,
                authority: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
                caveats: z.array(z.object({ enforcer: address, terms: hex, args: hex }).strict()),
                salt: atomic,
                signature: hex,
              })
              .strict(),
            limits: z
              .object({ token: address, perDay: atomic, per30Days: atomic, start: z.number().int(), expiresAt: z.number().int() })
              .strict(),
          })
          .strict(),
      )
      .min(1)
      .max(2)
      .refine((ds) => ds[0]?.asset === 'USDC' && (ds.length === 1 || ds[1]?.asset === 'LREP'), {
        message: 'a grant holds the USDC delegation, then optionally one LREP delegation',
      }),
    createdAt: z.string(),
  })
  .strict();

export type GrantFile = z.infer<typeof grantSchema>;

export type GrantAsset = 'USDC' | 'LREP';

export interface GrantEntry {
  asset: GrantAsset;
  hash: Hex;
  delegation: Delegation;
  limits: GrantLimits;
}

export function grantDocument(
  o: {
    chainId: number;
    owner: Address;
    session: Address;
    delegationManager: Address;
    deleGator: Address;
    createdAt: Date;
  } & ({ entry: GrantEntry } | { entries: GrantEntry[] }),
): GrantFile {
  const entries = 'entries' in o ? o.entries : [o.entry];
  return {
    version: GRANT_FILE_VERSION,
    chainId: o.chainId,
    owner: o.owner,
    session: o.session,
    delegationManager: o.delegationManager,
    deleGator: o.deleGator,
    delegations: entries.map(({ asset, hash, delegation: d, limits: l }) => ({
      asset,
      hash,
      delegation: {
        delegate: d.delegate,
        delegator: d.delegator,
        authority: d.authority,
        caveats: d.caveats.map((c) => ({ enforcer: c.enforcer, terms: c.terms, args: c.args })),
        salt: d.salt.toString(),
        signature: d.signature,
      },
      limits: { token: l.token, perDay: l.perDay.toString(), per30Days: l.per30Days.toString(), start: l.start, expiresAt: l.expiresAt },
    })),
    createdAt: o.createdAt.toISOString(),
  };
}

/** Parses a grant file's JSON; refuses (exit 2) anything that is not the shape above. */
export function parseGrantFile(raw: unknown, where: string): GrantFile {
  const parsed = grantSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(
      'budget_grant_invalid',
      `${where} is not a loopsign grant: ${issue?.path.join('.') || 'document'}: ${issue?.message}`,
      {
        hint: 'have the owner run `loopsign budget grant` again and pass the file it writes',
      },
    );
  }
  return parsed.data;
}

/** A grant file's delegation for `asset`, if the owner granted that asset. */
export function grantEntry(file: GrantFile, asset: GrantAsset = 'USDC'): GrantFile['delegations'][number] | undefined {
  return file.delegations.find((e) => e.asset === asset);
}

/** The signed delegation of a parsed grant file for `asset` (USDC unless named), as the chain takes it. */
export function delegationOf(file: GrantFile, asset: GrantAsset = 'USDC'): Delegation {
  const d = grantEntry(file, asset)!.delegation;
  return {
    delegate: d.delegate as Address,
    delegator: d.delegator as Address,
    authority: d.authority as Hex,
    caveats: d.caveats.map((c) => ({ enforcer: c.enforcer as Address, terms: c.terms as Hex, args: c.args as Hex })),
    salt: BigInt(d.salt),
    signature: d.signature as Hex,
  };
}
