// loopsign budget revoke --grant <file|id> | --all (issue 38): the owner stops grants on chain. One grant:
// DelegationManager.disableDelegation of its delegation. Every grant: NonceEnforcer.incrementNonce(DelegationManager)
// from the owner's account, which moves the nonce every grant carries on. Each is one transaction from the owner's own
// wallet, run by the executor (journaled, resumed after a kill, never sent twice); a person confirms it first.
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { encodeFunctionData, getAddress, isAddressEqual, parseAbi, type Hex } from 'viem';
import type { Context } from '../context.js';
import { RefusedError, UsageError } from '../errors.js';
import { readUserJson } from '../fsutil.js';
import type { DelegationContracts } from '../chains/delegation.js';
import type { BudgetRevokeOptions } from './budget.def.js';

const NONCE_ABI = parseAbi(['function currentNonce(address delegationManager, address delegator) view returns (uint256)']);

function grantsDir(ctx: Context): string {
  return path.join(ctx.paths.state, 'budget', 'grants');
}

const isGrantId = (value: string) => /^0x[0-9a-fA-F]{64}$/.test(value);

/** --grant: a grant file, or the id (delegation hash) of a grant recorded in the state folder. */
async function grantPath(ctx: Context, value: string): Promise<string> {
  if (!isGrantId(value)) return path.resolve(value);
  const file = path.join(grantsDir(ctx), `${value.toLowerCase()}.json`);
  try {
    await fs.access(file);
  } catch {
    throw new UsageError('budget_grant_not_found', `no grant ${value} is recorded in ${grantsDir(ctx)}`, {
      hint: 'pass the grant file the owner wrote (--grant grant.json), or an id `loopsign budget show` lists',
    });
  }
  return file;
}

/** The grant file `budget grant` recorded in the state folder for this grant id, if this machine holds one. */
async function readRecordedCopy(ctx: Context, grant: Hex) {
  const { parseGrantFile } = await import('../budget/grant-file.js');
  const file = path.join(grantsDir(ctx), `${grant.toLowerCase()}.json`);
  let raw: string;
  try {
    raw = await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    return parseGrantFile(JSON.parse(raw), file);
  } catch {
    // An unreadable copy names nothing: the file given is all there is (its own checks follow).
    return undefined;
  }
}

async function confirmed(ctx: Context, yes: boolean | undefined, planText: string, details: Record<string, unknown>): Promise<void> {
  if (yes === true) return;
  if (ctx.out.json || process.stdin.isTTY !== true || process.stderr.isTTY !== true)
    throw new RefusedError(
      'budget_confirmation_required',
      'a revocation is confirmed by a person before it is sent, and no terminal can ask here; nothing was signed',
      { hint: 'run it on a terminal, or read the plan and pass --yes', details: { plan: details } },
    );
  const { confirm } = await import('@inquirer/prompts');
  const ok = await confirm({ message: `${planText}\nSend this revocation?`, default: false }, { output: process.stderr });
  if (!ok) throw new RefusedError('budget_declined', 'the revocation was declined at the prompt; nothing was signed or sent');
}

export async function budgetRevoke(ctx: Context, o: BudgetRevokeOptions): Promise<void> {
  if ((o.grant === undefined) === (o.all !== true))
    throw new UsageError(
      'budget_revoke_target',
      'say what to revoke: --grant <file|id> for one grant, or --all for every grant of this wallet',
      {
        hint: 'loopsign budget revoke --grant grant.json   or   loopsign budget revoke --all',
      },
    );
  const file = o.grant === undefined ? undefined : await grantPath(ctx, o.grant);
  const { delegationAnchors, checkDelegationCode } = await import('../chains/delegation.js');
  const { settings, client } = await ctx.chain();
  const chain = settings.chain;
  const anchors = delegationAnchors(chain.chainId, settings.manifest);
  const dm = anchors.contracts.delegationManager;
  await checkDelegationCode(client, anchors, ctx.paths.state, ['delegationManager', 'nonceEnforcer']);
  const wallet = await ctx.wallet();
  try {
    const owner = getAddress(wallet.address);
    const { parseGrantFile, delegationOf } = await import('../budget/grant-file.js');
    const { delegationHash, delegationSigner } = await import('../budget/delegation.js');
    const { budgetRevokeAbi } = await import('../wallet/spend-effects.js');
    const { withOwnerOperation } = await import('../budget/owner-tx.js');
    const ownerDeps = async () => ({
      ctx,
      client,
      chain,
      anchors,
      account: await wallet.account,
      cannotDelegate: wallet.capabilities.authorization ? undefined : (wallet.capabilities.authorizationReason ?? 'not supported'),
      maxFeePerGas: settings.maxFeePerGas.value,
    });
    const gasOf = async (hash: Hex | undefined) =>
      hash === undefined ? null : (await client.getTransactionReceipt({ hash })).gasUsed.toString();

    if (file !== undefined) {
      const doc = parseGrantFile(await readUserJson(file, 'grant file'), file);
      if (doc.chainId !== chain.chainId)
        throw new UsageError(
          'budget_grant_invalid',
          `${file} is a grant on chain ${doc.chainId}, not the configured chain ${chain.chainId}`,
        );
      if (!isAddressEqual(doc.delegationManager as Hex, dm))
        throw new UsageError('budget_grant_invalid', `${file} names the DelegationManager ${doc.delegationManager}, not the pinned ${dm}`);
      const delegation = delegationOf(doc);
      // The hash the manager disables is the one it computes from the delegation sent, never the file's own field.
      const grant = delegationHash(delegation);
      // Asked for by id, that id and no other hash is disabled (a recorded copy edited since is not that grant).
      if (isGrantId(o.grant!) && grant.toLowerCase() !== o.grant!.toLowerCase())
        throw new RefusedError(
          'budget_revoke_unsigned',
          `the grant recorded as ${o.grant} (${file}) is now the delegation ${grant}: it was edited since it was recorded; nothing was sent`,
          { hint: 'revoke with the grant file `budget grant` wrote (--grant grant.json), or every grant of this wallet with --all' },
        );
      if (!isAddressEqual(delegation.delegator, owner))
        throw new UsageError(
          'budget_not_owner',
          `grant ${grant} is ${delegation.delegator}'s, not this wallet's (${owner}): only its owner can revoke it`,
          {
            hint: "run it with the owner's signer (the wallet that granted it)",
          },
        );
      // The manager disables whatever delegation its delegator sends, signed or not: only one the owner signed is a
      // grant an agent can redeem. A file edited after signing (another salt, caveat or delegate) would be "revoked"
      // while the real grant still pulls.
      if (
        !isAddressEqual(
          await delegationSigner(delegation, chain.chainId, dm).catch(() => '0x0000000000000000000000000000000000000000'),
          owner,
        )
      )
        throw new RefusedError(
          'budget_revoke_unsigned',
          `${file} holds a delegation ${grant} that ${owner} did not sign (edited or corrupted): disabling it would stop no grant; nothing was sent`,
          {
            hint: 'revoke with the grant file `budget grant` wrote (its copy is in the state folder: `loopsign budget show` lists the ids), or every grant of this wallet with --all',
          },
        );
      // A grant with LREP caps holds a second delegation (same owner, same session): it is disabled too, after the
      // same check that its owner signed it.
      // The copy `budget grant` recorded (keyed by the USDC delegation's hash) names the grant's LREP delegation even
      // when the file given lacks it or holds another one: that one is disabled, never "revoked" while it still pulls.
      const recorded = await readRecordedCopy(ctx, grant);
      const lrepOf = (g: typeof doc | undefined) => (g && g.delegations.length > 1 ? delegationOf(g, 'LREP') : undefined);
      const lrepDelegation = lrepOf(recorded) ?? lrepOf(doc);
      if (
        lrepDelegation &&
        (!isAddressEqual(lrepDelegation.delegator, owner) ||
          !isAddressEqual(
            await delegationSigner(lrepDelegation, chain.chainId, dm).catch(() => '0x0000000000000000000000000000000000000000'),
            owner,
          ))
      )
        throw new RefusedError(
          'budget_revoke_unsigned',
          `${file} holds an LREP delegation ${delegationHash(lrepDelegation)} that ${owner} did not sign (edited or corrupted); nothing was sent`,
          { hint: 'revoke with the grant file `budget grant` wrote, or every grant of this wallet with --all' },
        );
      const isDisabled = async (hash: Hex) =>
        (await client.readContract({
          address: dm,
          abi: parseAbi(['function disabledDelegations(bytes32) view returns (bool)']),
          functionName: 'disabledDelegations',
          args: [hash],
        })) as boolean;
      const targets: { asset: string; delegation: typeof delegation; hash: Hex }[] = [];
      if (!(await isDisabled(grant))) targets.push({ asset: 'USDC', delegation, hash: grant });
      const lrepHash = lrepDelegation ? delegationHash(lrepDelegation) : undefined;
      if (lrepDelegation && lrepHash && !(await isDisabled(lrepHash)))
        targets.push({ asset: 'LREP', delegation: lrepDelegation, hash: lrepHash });
      const base = {
        chainId: chain.chainId,
        owner,
        grant,
        ...(lrepHash ? { lrepGrant: lrepHash } : {}),
        session: delegation.delegate,
        delegationManager: dm,
      };
      if (targets.length === 0) {
        ctx.out.result(
          { ...base, revoked: true, already: true, transaction: null, gasUsed: null },
          () => `grant ${grant} is already revoked on chain; nothing was sent`,
        );
        return;
      }
      const planText = [
        `revoke grant ${grant} from ${owner} (this wallet) to ${delegation.delegate} on ${chain.name} (${chain.chainId})`,
        ...targets.map(
          (t) => `  one transaction from this wallet: DelegationManager ${dm} disableDelegation (${t.asset} delegation ${t.hash})`,
        ),
      ].join('\n');
      await confirmed(ctx, o.yes, planText, base);
      const calls = targets.map((t) => ({
        phase: 'disable_delegation',
        to: dm,
        data: encodeFunctionData({
          abi: budgetRevokeAbi,
          functionName: 'disableDelegation',
          args: [
            {
              ...t.delegation,
              caveats: t.delegation.caveats.map((c) => ({ enforcer: c.enforcer, terms: c.terms, args: c.args ?? '0x' })),
            },
          ],
        }),
        value: '0',
      }));
      ctx.out.progress('budget.revoke', `revoking grant ${grant}`);
      const { hashes } = await withOwnerOperation(await ownerDeps(), ['revoke', grant], (executor) =>
        executor.execute('revoke', calls, 'ordered'),
      );
      const transaction = hashes[0];
      ctx.out.result(
        {
          ...base,
          revoked: true,
          already: false,
          transaction: transaction ?? null,
          gasUsed: await gasOf(transaction),
          ...(hashes.length > 1 ? { transactions: hashes } : {}),
        },
        () => `${planText}\nrevoked in ${hashes.join(', ')}`,
      );
      return;
    }

    // --all: the nonce every grant of this wallet carries moves on. A rerun after a kill settles what it journaled
    // first, and does not move the nonce again when that transaction already did and no grant recorded here carries
    // the nonce it moved to.
    const nonceNow = () =>
      client.readContract({ address: anchors.contracts.nonceEnforcer, abi: NONCE_ABI, functionName: 'currentNonce', args: [dm, owner] });
    const recorded = await recordedGrants(ctx, anchors.contracts, chain.chainId, owner);
    const before = (await nonceNow()) as bigint;
    const planText = [
      `revoke every grant from ${owner} (this wallet) on ${chain.name} (${chain.chainId})`,
      `  one transaction from this wallet: NonceEnforcer ${anchors.contracts.nonceEnforcer} incrementNonce (nonce ${before} → ${before + 1n})`,
      `  grants recorded here that it stops: ${recorded.filter((g) => g.nonce === before).length}; grants signed later carry the new nonce`,
    ].join('\n');
    await confirmed(ctx, o.yes, planText, { chainId: chain.chainId, owner, nonce: before.toString() });
    ctx.out.progress('budget.revoke', `revoking every grant of ${owner}`);
    const call = {
      phase: 'increment_nonce',
      to: anchors.contracts.nonceEnforcer,
      data: encodeFunctionData({ abi: budgetRevokeAbi, functionName: 'incrementNonce', args: [dm] }),
      value: '0',
    };
    const transaction = await withOwnerOperation(await ownerDeps(), ['revoke-all'], async (executor, op) => {
      for (const stage of new Set(op.txs().map((t) => t.stage))) await executor.settleJournaled(stage);
      op.refresh();
      const now = (await nonceNow()) as bigint;
      // A run that got as far as its answer is finished: a later --all is a new request (grants may have been signed
      // since, on another machine too), never that run's rerun.
      const finished = (op.data as { finished?: string[] }).finished ?? [];
      const previous = `all:${now - 1n}`;
      const moved = finished.includes(previous) ? undefined : op.txsFor(previous).find((t) => t.status === 'mined');
      let stage = previous;
      let hash: Hex | undefined = moved?.hash;
      if (!moved || (await recordedGrants(ctx, anchors.contracts, chain.chainId, owner)).some((g) => g.nonce === now)) {
        stage = `all:${now}`;
        hash = (await executor.execute(stage, [call], 'ordered')).hashes[0];
      }
      await op.setStep('done', { finished: [...finished, stage] });
      return hash;
    });
    const after = (await nonceNow()) as bigint;
    const stopped = recorded.filter((g) => g.nonce < after).map((g) => g.grant);
    ctx.out.result(
      {
        chainId: chain.chainId,
        owner,
        nonceEnforcer: anchors.contracts.nonceEnforcer,
        nonce: after.toString(),
        revoked: stopped,
        transaction: transaction ?? null,
        gasUsed: await gasOf(transaction),
      },
      () => `${planText}\nrevoked in ${transaction}: the nonce is now ${after}; ${stopped.length} grant(s) recorded here stopped`,
    );
  } finally {
    await wallet.close();
  }
}

/** The grants of `owner` on the chain recorded in the state folder, with the nonce each carries (from its signed caveats). */
async function recordedGrants(
  ctx: Context,
  contracts: DelegationContracts,
  chainId: number,
  owner: Hex,
): Promise<{ grant: string; nonce: bigint }[]> {
  const { parseGrantFile } = await import('../budget/grant-file.js');
  const { decodeGrantCaveats } = await import('../budget/terms.js');
  const names = await fs.readdir(grantsDir(ctx)).catch(() => [] as string[]);
  const out: { grant: string; nonce: bigint }[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const file = path.join(grantsDir(ctx), name);
    // --all revokes on chain whatever is recorded here: a file it cannot read is named, and does not stop it.
    try {
      const doc = parseGrantFile(await readUserJson(file, 'grant file'), file);
      if (doc.chainId !== chainId || !isAddressEqual(doc.owner as Hex, owner)) continue;
      const caveats = doc.delegations[0]!.delegation.caveats as { enforcer: string; terms: Hex }[];
      out.push({ grant: doc.delegations[0]!.hash, nonce: decodeGrantCaveats(contracts, caveats).nonce });
    } catch (error) {
      ctx.out.warn(`skipping the recorded grant ${file}: ${(error as Error).message}`);
    }
  }
  return out;
}
