// loopsign budget grant | show (issue 38, docs/budget.md).
import path from 'node:path';
import type { Context } from '../context.js';
import { ChainError, RefusedError, UsageError } from '../errors.js';
import { ensurePrivateDir, readUserJson, refuseUnwritable, writeFileAtomically, writeFileNoFollow } from '../fsutil.js';
import { checkAddress } from '../address.js';
import { formatUnits, parseDisplayAmount } from '../amounts.js';
import type { BudgetGrantOptions, BudgetShowOptions, BudgetSweepOptions } from './budget.def.js';
import type { Address } from '../chains/table.js';
import { grantsDir as grantsDirOf } from '../budget/records.js';
import { checkBudgetShowRequest, type BudgetShowRequest } from '../budget/show-request.js';

/** The most `--eth-now` sends: gas money for an agent, not a way to move funds. */
const MAX_ETH_NOW = 10n ** 18n;
const UNIT_SECONDS: Record<string, number> = { m: 60, h: 3600, d: 86_400, w: 604_800 };
const MAX_EXPIRY_SECONDS = 5 * 366 * 86_400;

/** `--expires`: 90d, 12h, 30m, 4w. */
export function parseExpiry(value: string): number {
  const m = /^([1-9][0-9]{0,6})([mhdw])$/.exec(value.trim());
  const seconds = m ? Number(m[1]) * UNIT_SECONDS[m[2]!]! : Number.NaN;
  if (!Number.isSafeInteger(seconds) || seconds > MAX_EXPIRY_SECONDS)
    throw new UsageError('invalid_expiry', `--expires ${value} is not a duration like 90d, 12h or 30m (at most 5 years)`);
  return seconds;
}

/** Where granted and imported grants are recorded (src/budget/records.ts). */
function grantsDir(ctx: Context): string {
  return grantsDirOf(ctx.paths.state);
}

const usdc = (atomic: bigint | string) => `${formatUnits(BigInt(atomic), 6)} USDC`;
const lrepText = (atomic: bigint | string) => `${formatUnits(BigInt(atomic), 6)} LREP`;
/** A grant state's amounts in its own asset's display units. */
const amountOf = (asset: string) => (asset === 'LREP' ? lrepText : usdc);
const iso = (s: number) => new Date(s * 1000).toISOString();

export async function budgetGrant(ctx: Context, o: BudgetGrantOptions): Promise<void> {
  const session = checkAddress(o.to, '--to');
  const perDay = parseDisplayAmount(o.usdcPerDay, 6, '--usdc-per-day');
  const per30Days = parseDisplayAmount(o.usdcPer30Days, 6, '--usdc-per-30-days');
  if ((o.lrepPerDay === undefined) !== (o.lrepPer30Days === undefined))
    throw new UsageError('usage', 'LREP caps need both --lrep-per-day and --lrep-per-30-days (or neither, for a USDC-only grant)');
  const lrep =
    o.lrepPerDay !== undefined && o.lrepPer30Days !== undefined
      ? {
          perDay: parseDisplayAmount(o.lrepPerDay, 6, '--lrep-per-day'),
          per30Days: parseDisplayAmount(o.lrepPer30Days, 6, '--lrep-per-30-days'),
        }
      : undefined;
  const ethNow = o.ethNow === undefined ? undefined : parseDisplayAmount(o.ethNow, 18, '--eth-now');
  if (ethNow !== undefined && (ethNow === 0n || ethNow > MAX_ETH_NOW))
    throw new UsageError(
      'invalid_amount',
      `--eth-now ${o.ethNow} is not an amount of ETH above 0 and at most 1 (gas money for the agent)`,
      {
        hint: 'give a small amount such as 0.01; fund larger amounts by a transfer of your own',
      },
    );
  const expiresInSeconds = parseExpiry(o.expires);
  const out = path.resolve(o.out);
  // Before any chain read or signature: a grant that cannot be saved is not signed.
  await refuseUnwritable(out, { replace: o.force === true, replaceFlag: '--force' });

  const { delegationAnchors } = await import('../chains/delegation.js');
  const { planGrant, signGrant } = await import('../budget/grant.js');
  const { settings, client } = await ctx.chain();
  const chain = settings.chain;
  const anchors = delegationAnchors(chain.chainId, settings.manifest);
  const token = chain.tokens.USDC.address;
  if (!token) throw new UsageError('budget_unsupported_chain', `no USDC address is configured on chain ${chain.chainId}`);
  const wallet = await ctx.wallet();
  try {
    const deps = {
      client,
      chainId: chain.chainId,
      owner: wallet.address,
      usdc: token,
      ...(chain.tokens.LREP.address ? { lrep: chain.tokens.LREP.address } : {}),
      anchors,
      ...(chain.batchDelegate ? { batchDelegate: chain.batchDelegate } : {}),
      stateDir: ctx.paths.state,
    };
    const plan = await planGrant(deps, { session, perDay, per30Days, ...(lrep ? { lrep } : {}), expiresInSeconds });
    const l = plan.limits;
    const planText = [
      `grant from ${plan.owner} (this wallet) to ${l.session} on ${chain.name} (${chain.chainId})`,
      `  USDC ${l.token}: at most ${usdc(l.perDay)} per UTC day and ${usdc(l.per30Days)} per 30 days`,
      ...(plan.lrepLimits
        ? [
            `  LREP ${plan.lrepLimits.token}: at most ${lrepText(plan.lrepLimits.perDay)} per UTC day and ${lrepText(plan.lrepLimits.per30Days)} per 30 days (a second delegation)`,
          ]
        : []),
      `  periods from ${iso(l.start)}; expires ${iso(l.expiresAt)}; revocable by nonce ${l.nonce}`,
      `  only ${plan.lrepLimits ? 'USDC.transfer and LREP.transfer' : 'USDC.transfer'} to ${l.session}, only through the DelegationManager below`,
      plan.ownerCode === 'deleGator'
        ? `  this wallet already runs the pinned DeleGator ${anchors.contracts.deleGator}`
        : `  first, one EIP-7702 transaction points this wallet at the DeleGator ${anchors.contracts.deleGator}${plan.ownerCode === 'batchDelegate' ? ` (replacing loopsign's batch delegate ${chain.batchDelegate}; atomic asks keep working)` : ''}`,
      ...(ethNow !== undefined
        ? [`  then one transaction from this wallet: ${formatUnits(ethNow, 18)} ETH to ${l.session} for its gas (--eth-now)`]
        : []),
      '  contracts (code hash, trust):',
      ...plan.contracts.map((c) => `    ${c.name.padEnd(28)} ${c.address}  ${c.codeHash}  ${c.trust}`),
    ].join('\n');
    if (o.yes !== true) {
      if (ctx.out.json || process.stdin.isTTY !== true || process.stderr.isTTY !== true)
        throw new RefusedError(
          'budget_confirmation_required',
          'a grant is confirmed by a person before it is signed, and no terminal can ask here; nothing was signed',
          {
            hint: 'run it on a terminal, or read the plan and pass --yes',
            details: { plan: { ...planDoc(plan), ...(ethNow !== undefined ? { ethNow: ethNow.toString() } : {}) } },
          },
        );
      const { confirm } = await import('@inquirer/prompts');
      const yes = await confirm({ message: `${planText}\nSign this grant?`, default: false }, { output: process.stderr });
      if (!yes) throw new RefusedError('budget_declined', 'the grant was declined at the prompt; nothing was signed or sent');
    }
    ctx.out.progress(
      'budget.sign',
      plan.ownerCode === 'deleGator' ? 'signing the grant' : 'delegating this wallet to the DeleGator, then signing the grant',
    );
    const account = await wallet.account;
    const { delegateOwner } = await import('../budget/owner-tx.js');
    const owner = {
      ctx,
      client,
      chain,
      anchors,
      account,
      cannotDelegate: wallet.capabilities.authorization ? undefined : (wallet.capabilities.authorizationReason ?? 'not supported'),
      maxFeePerGas: settings.maxFeePerGas.value,
    };
    const signed = await signGrant(deps, plan, account, new Date(ctx.clock.now()), async () =>
      plan.ownerCode === 'deleGator' ? undefined : delegateOwner(owner),
    );
    const text = JSON.stringify(signed.grant, null, 2) + '\n';
    await writeFileNoFollow(out, text, { replace: o.force === true, replaceFlag: '--force' });
    const hash = signed.grant.delegations[0]!.hash;
    await ensurePrivateDir(grantsDir(ctx));
    await writeFileAtomically(path.join(grantsDir(ctx), `${hash}.json`), text);
    let eth: { transaction: string | null; resumed: boolean; value: bigint } | undefined;
    if (ethNow !== undefined) {
      const { sendEthNow } = await import('../budget/eth-now.js');
      eth = await sendEthNow(owner, { session: l.session, value: ethNow, grant: hash as `0x${string}` });
    }
    ctx.out.result(
      {
        grant: hash,
        file: out,
        ...planDoc(plan),
        ...(signed.delegationTx ? { delegationTx: signed.delegationTx } : {}),
        ...(eth ? { ethNow: { amount: eth.value.toString(), transaction: eth.transaction, resumed: eth.resumed } } : {}),
      },
      () =>
        `${planText}\n${signed.delegationTx ? `delegated in ${signed.delegationTx}\n` : ''}signed grant ${hash}\nwritten to ${out} (mode 0600); on the agent's machine: loopsign budget import ${path.basename(out)}${eth ? `\nsent ${formatUnits(eth.value, 18)} ETH to ${l.session}${eth.resumed ? ' (by the earlier, interrupted run)' : ''}: ${eth.transaction}` : ''}`,
    );
  } finally {
    await wallet.close();
  }
}

function planDoc(plan: import('../budget/grant.js').GrantPlan) {
  const l = plan.limits;
  return {
    chainId: plan.chainId,
    owner: plan.owner,
    session: l.session,
    tokenAddress: l.token,
    perDay: l.perDay.toString(),
    per30Days: l.per30Days.toString(),
    start: l.start,
    expiresAt: l.expiresAt,
    nonce: l.nonce.toString(),
    ...(plan.lrepLimits
      ? {
          lrep: {
            tokenAddress: plan.lrepLimits.token,
            perDay: plan.lrepLimits.perDay.toString(),
            per30Days: plan.lrepLimits.per30Days.toString(),
          },
        }
      : {}),
    ownerCode: plan.ownerCode,
    contracts: plan.contracts,
  };
}

export async function budgetImport(ctx: Context, _o: Record<string, unknown>, args: unknown[]): Promise<void> {
  const file = path.resolve(String(args[0]));
  const { delegationAnchors, checkDelegationCode } = await import('../chains/delegation.js');
  const { parseGrantFile } = await import('../budget/grant-file.js');
  const { checkGrant } = await import('../budget/import.js');
  const doc = parseGrantFile(await readUserJson(file, 'grant file'), file);
  const { settings, client } = await ctx.chain();
  const chain = settings.chain;
  const anchors = delegationAnchors(chain.chainId, settings.manifest);
  const token = chain.tokens.USDC.address;
  if (!token) throw new UsageError('budget_unsupported_chain', `no USDC address is configured on chain ${chain.chainId}`);
  await checkDelegationCode(client, anchors, ctx.paths.state);
  const wallet = await ctx.walletAddress();
  const lrepToken = chain.tokens.LREP.address;
  const { state } = await checkGrant(
    { client, chainId: chain.chainId, wallet, usdc: token, ...(lrepToken ? { lrep: lrepToken } : {}), anchors },
    doc,
  );
  const { readGrantState } = await import('../budget/show.js');
  const lrepState = doc.delegations.length > 1 ? await readGrantState(client, anchors.contracts, doc, 'LREP') : undefined;
  await ensurePrivateDir(grantsDir(ctx));
  await writeFileAtomically(path.join(grantsDir(ctx), `${state.grant}.json`), JSON.stringify(doc, null, 2) + '\n');
  ctx.out.result({ imported: state.grant, file, ...state, ...(lrepState ? { lrep: lrepState } : {}) }, () =>
    [
      `imported grant ${state.grant}: ${state.owner} → ${state.session} (this wallet); ${state.status}; expires ${state.expiresAtIso}`,
      ...[state, ...(lrepState ? [lrepState] : [])].flatMap((s) =>
        s.windows.map(
          (w) =>
            `  ${s.asset} per ${w.window === 'day' ? 'UTC day' : '30 days'}: ${amountOf(s.asset)(w.available)} of ${amountOf(s.asset)(w.cap)} available; resets ${w.resetsAtIso}`,
        ),
      ),
    ].join('\n'),
  );
}

/**
 * What `budget show` prints and the MCP `loopsign_budget` tool returns: each grant's caps, used, available, next reset
 * and expiry, read from the enforcers on chain. Fails closed: a paused DelegationManager (nothing can be pulled, and
 * its views may not say what a pull would get) is exit 4 `budget_unavailable`, not a document with a status.
 */
export async function budgetShowDocument(ctx: Context, request: BudgetShowRequest) {
  const { delegationAnchors, checkDelegationCode } = await import('../chains/delegation.js');
  const { parseGrantFile } = await import('../budget/grant-file.js');
  const { readGrantState } = await import('../budget/show.js');
  const { recordedGrants } = await import('../budget/records.js');
  const { settings, client } = await ctx.chain();
  const chainId = settings.chain.chainId;
  const anchors = delegationAnchors(chainId, settings.manifest);
  // The enforcers' views are only worth what their code is: the same pinned or first-use hashes as grant and import.
  await checkDelegationCode(client, anchors, ctx.paths.state);
  const docs: { file: string; grant: import('../budget/grant-file.js').GrantFile }[] = [];
  if (request.grant !== undefined) {
    const file = path.resolve(request.grant);
    const grant = parseGrantFile(await readUserJson(file, 'grant file'), file);
    if (grant.chainId !== chainId)
      throw new UsageError('budget_grant_invalid', `${file} is a grant on chain ${grant.chainId}, not the configured chain ${chainId}`);
    docs.push({ file, grant });
  } else docs.push(...(await recordedGrants(ctx.paths.state, { chainId })));
  const grants: import('../budget/show.js').GrantState[] = [];
  for (const { file, grant } of docs) {
    if (grant.delegationManager.toLowerCase() !== anchors.contracts.delegationManager.toLowerCase())
      throw new UsageError(
        'budget_grant_invalid',
        `${file} names the DelegationManager ${grant.delegationManager}, not the pinned ${anchors.contracts.delegationManager}`,
      );
    grants.push(await readGrantState(client, anchors.contracts, grant));
    // A grant with LREP caps: its LREP delegation is listed right after, as its own state (its own id and windows).
    if (grant.delegations.length > 1) grants.push(await readGrantState(client, anchors.contracts, grant, 'LREP'));
  }
  if (grants.length === 0)
    throw new UsageError('budget_no_grant', `no grant is recorded for chain ${chainId} in ${grantsDir(ctx)}`, {
      hint: 'pass --grant grant.json, or grant one with `loopsign budget grant`',
    });
  const paused = grants.find((g) => g.status === 'paused');
  if (paused)
    throw new ChainError(
      'budget_unavailable',
      `the DelegationManager ${anchors.contracts.delegationManager} is paused: no grant can be redeemed now, and what it shows is not what a pull would get`,
      { hint: 'nothing is pulled while it is paused; run again later (the pause is set by its owner, MetaMask, not by loopsign)' },
    );
  return { chainId, grants };
}

export async function budgetShow(ctx: Context, o: BudgetShowOptions): Promise<void> {
  const { chainId, grants } = await budgetShowDocument(ctx, checkBudgetShowRequest(o));
  ctx.out.result({ chainId, grants }, () =>
    grants
      .map((g) =>
        [
          `grant ${g.grant} (${g.asset}): ${g.status}; ${g.owner} → ${g.session}; expires ${g.expiresAtIso}`,
          ...g.windows.map(
            (w) =>
              `  per ${w.window === 'day' ? 'UTC day' : '30 days'}: ${amountOf(g.asset)(w.available)} of ${amountOf(g.asset)(w.cap)} available (${amountOf(g.asset)(w.used)} used); resets ${w.resetsAtIso}`,
          ),
        ].join('\n'),
      )
      .join('\n'),
  );
}

/**
 * `budget sweep`: S's USDC and LREP above --float (and above what its pending asks still need) back to the owner of
 * its grant, as a journaled operation on the executor. An unfinished sweep of S is settled first (found on chain or
 * re-broadcast byte for byte), so a rerun after a crash never sends a second transfer for the first one's tokens.
 */
export async function budgetSweep(ctx: Context, o: BudgetSweepOptions): Promise<void> {
  const floatAtomic = o.float === undefined ? 0n : parseDisplayAmount(o.float, 6, '--float');
  const [{ recordedGrants, grantsOfSession }, sweep, { Operation }, { Executor }, { SpendLedger }, { randomBytes }] = await Promise.all([
    import('../budget/records.js'),
    import('../budget/sweep.js'),
    import('../store/operation.js'),
    import('../wallet/executor.js'),
    import('../store/ledger.js'),
    import('node:crypto'),
  ]);
  const { settings, client } = await ctx.chain();
  const chain = settings.chain;
  const wallet = await ctx.wallet();
  try {
    const S = wallet.address;
    const mine = grantsOfSession(await recordedGrants(ctx.paths.state, { chainId: chain.chainId }), S, chain.chainId);
    if (mine.length === 0)
      throw new UsageError(
        'budget_no_grant',
        `no grant to ${S} is recorded for chain ${chain.chainId}, so there is no owner to sweep back to`,
        {
          hint: 'import the grant first: loopsign budget import grant.json',
        },
      );
    const owners = [...new Set(mine.map((g) => g.grant.owner.toLowerCase()))];
    if (owners.length > 1)
      throw new UsageError(
        'usage',
        `${S} holds grants from ${owners.length} owners (${owners.join(', ')}); loopsign cannot tell whose tokens these are`,
        {
          hint: 'sweep by hand, or keep one owner per session address (a session address per owner)',
        },
      );
    const owner = mine[0]!.grant.owner as Address;
    const tokens = { USDC: chain.tokens.USDC.address, LREP: chain.tokens.LREP.address };
    const store = await ctx.store();
    const sweepChain = { ...chain, returnTo: owner };
    const run = async (id: string, resume: boolean) => {
      const op = await Operation.open(store, 'budget-sweep', id, {
        chainId: chain.chainId,
        wallet: S,
        data: { owner, usdc: '0', lrep: '0', float: floatAtomic.toString() },
      });
      try {
        let amounts = { USDC: 0n, LREP: 0n };
        const ledger = new SpendLedger(op, sweepChain, S, {
          stage: (stage) => (stage === 'sweep' ? amounts : {}),
          // Read when a signature is admitted: the amounts this run planned under the wallet's claim.
          get total() {
            return amounts;
          },
          source: 'the balances this sweep read above --float',
        });
        const account = await wallet.account;
        const executor = new Executor({
          client,
          account,
          chain: sweepChain,
          op,
          out: ctx.out,
          ledger,
          allowDelegation: false,
          maxFeePerGas: settings.maxFeePerGas.value,
        });
        return await executor.withWalletLock(async () => {
          if (resume) {
            await executor.settleJournaled('sweep');
            const d = op.data as { usdc: string; lrep: string };
            await op.setStep('done');
            return {
              operation: id,
              resumed: true,
              amounts: { USDC: BigInt(d.usdc), LREP: BigInt(d.lrep) },
              hashes: op.txsFor('sweep').map((t) => t.hash),
            };
          }
          const need = await store.read((db) => sweep.pendingNeeds(db, chain.chainId, S, ctx.clock.now()));
          if (need.unreadable.length)
            throw new RefusedError(
              'budget_sweep_pending',
              `loopsign cannot tell what the pending operation(s) ${need.unreadable.join(', ')} of ${S} still need; nothing was swept`,
              {
                hint: 'let them finish (loopsign status / history --operation), then sweep again',
              },
            );
          const balance = async (token: Address | undefined) =>
            token
              ? ((await client.readContract({ address: token, abi: ERC20_BALANCE, functionName: 'balanceOf', args: [S] })) as bigint)
              : 0n;
          const balances = { USDC: await balance(tokens.USDC), LREP: await balance(tokens.LREP) };
          const float = { USDC: floatAtomic, LREP: floatAtomic };
          amounts = sweep.sweepAmounts(balances, float, need.reserved);
          if (!tokens.LREP) amounts.LREP = 0n;
          const plan = { owner, float, balances, reserved: need.reserved, amounts, pending: need.pending };
          const calls = sweep.sweepCalls(plan, tokens as Record<'USDC' | 'LREP', Address>);
          const planText = [
            `sweep from ${S} (this wallet) back to ${owner}, the owner of its grant:`,
            ...(['USDC', 'LREP'] as const).map(
              (a) =>
                `  ${a}: balance ${sweep.display(balances[a], a)}, keep ${sweep.display(float[a], a)} (--float)${need.reserved[a] > 0n ? ` + ${sweep.display(need.reserved[a], a)} for pending asks` : ''}: sweep ${sweep.display(amounts[a], a)}`,
            ),
            ...need.pending.map(
              (p) =>
                `  pending: ${p.operation} (${p.step}) still needs ${Object.entries(p.needs)
                  .map(([a, v]) => sweep.display(BigInt(v), a as 'USDC'))
                  .join(' + ')}`,
            ),
          ].join('\n');
          if (calls.length === 0) {
            await op.setStep('done');
            return { operation: id, plan, planText, hashes: [] as string[] };
          }
          if (o.yes !== true) {
            if (ctx.out.json || process.stdin.isTTY !== true || process.stderr.isTTY !== true)
              throw new RefusedError('budget_sweep_confirmation_required', `${planText}\nno terminal can ask here; nothing was signed`, {
                hint: 'run it on a terminal, or read the plan and pass --yes',
                details: { plan: sweepDoc(plan) },
              });
            const { confirm } = await import('@inquirer/prompts');
            if (!(await confirm({ message: `${planText}\nSend it?`, default: false }, { output: process.stderr })))
              throw new RefusedError('budget_declined', 'the sweep was declined at the prompt; nothing was signed or sent');
          }
          await op.setStep('sweep:planned', { usdc: amounts.USDC.toString(), lrep: amounts.LREP.toString() });
          const { hashes } = await executor.execute('sweep', calls, 'ordered');
          await op.setStep('done');
          return { operation: id, plan, planText, hashes };
        });
      } finally {
        await op.close();
      }
    };
    // An unfinished sweep of S first (a crash between signing and the receipt): settled, never signed again.
    const unfinished = await store.read(
      (db) =>
        db
          .prepare("SELECT id FROM operations WHERE kind = 'budget-sweep' AND chain_id = ? AND lower(wallet) = lower(?) AND step != 'done'")
          .all(chain.chainId, S) as { id: string }[],
    );
    const resumed: { operation: string; hashes: string[] }[] = [];
    for (const { id } of unfinished) resumed.push(await run(id, true));
    const r = await run(`budget-sweep-${randomBytes(16).toString('hex')}`, false);
    const plan = 'plan' in r && r.plan ? r.plan : undefined;
    ctx.out.result(
      {
        operation: r.operation,
        owner,
        ...(plan ? sweepDoc(plan) : {}),
        transactionHashes: r.hashes,
        ...(resumed.length ? { resumed: resumed.map((x) => ({ operation: x.operation, transactionHashes: x.hashes })) } : {}),
      },
      () =>
        [
          ...resumed.map((x) => `finished the earlier sweep ${x.operation}: ${x.hashes.join(', ') || 'nothing was sent'}`),
          'planText' in r ? r.planText : '',
          r.hashes.length ? `swept in ${r.hashes.join(', ')} (operation ${r.operation})` : 'nothing to sweep; nothing was sent',
        ]
          .filter(Boolean)
          .join('\n'),
    );
  } finally {
    await wallet.close();
  }
}

const ERC20_BALANCE = [
  {
    type: 'function',
    name: 'balanceOf',
    stateMutability: 'view',
    inputs: [{ name: 'who', type: 'address' }],
    outputs: [{ type: 'uint256' }],
  },
] as const;

function sweepDoc(plan: import('../budget/sweep.js').SweepPlan) {
  const s = (x: Record<string, bigint>) => ({ USDC: x.USDC!.toString(), LREP: x.LREP!.toString() });
  return { float: s(plan.float), balances: s(plan.balances), reserved: s(plan.reserved), swept: s(plan.amounts), pending: plan.pending };
}
