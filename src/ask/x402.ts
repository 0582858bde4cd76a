// The x402 authorization of an ask (chain.md §8): the EIP-3009 ReceiveWithAuthorization the service asks for, checked
// in full, admitted by the spend ledger, signed and recorded in one write transaction — or the one already signed for
// this ask while it stays valid for two more minutes (same nonce, so it can pay only once).
import { formatUnits, type Hex } from 'viem';
import type { ServiceDoc } from '../service/doc.js';
import { checkX402Request, refuse, type GuardContext, type X402Message } from '../wallet/plan-guard.js';
import type { Run } from './run.js';

export interface SignedX402 {
  message: X402Message;
  signature: Hex;
  /** What the follow-up request carries. */
  payload: Record<string, string>;
}

/** Now, for an authorization's validity: the later of the clock and the chain's latest block. */
async function x402Now(run: Run): Promise<number> {
  const latest = await run.client.getBlock({ blockTag: 'latest' });
  return Math.max(Math.floor(run.ctx.clock.now() / 1000), Number(latest.timestamp));
}

/** The authorization this ask signed already and a rerun sends again, while it is valid for two more minutes. */
function storedAuthorization(run: Run, now: number) {
  const stored = run.journal
    .authorizations()
    .filter((a) => !a.dead)
    .at(-1);
  return stored && BigInt(stored.message.validBefore) > BigInt(now + 120) ? stored : undefined;
}

/**
 * The service's request for an authorization checked as signX402 will check it, signing nothing: a budget pull
 * (src/budget/pull.ts) is mined before the authorization is signed, and O's money must not move for a request the
 * guard then refuses.
 */
export async function checkX402Answer(run: Run, g: GuardContext, response: ServiceDoc): Promise<void> {
  const now = await x402Now(run);
  if (storedAuthorization(run, now)) return;
  if (response.nextAction !== 'sign_x402_authorization')
    refuse('x402_missing', `the service did not ask for an authorization (nextAction ${String(response.nextAction)})`);
  checkX402Request(g, response, now);
}

export async function signX402(run: Run, g: GuardContext, response: ServiceDoc): Promise<SignedX402> {
  const { client, journal, ctx } = run;
  const now = await x402Now(run);
  const stored = storedAuthorization(run, now);
  if (stored) {
    const m = stored.message;
    const message = {
      from: m.from as Hex,
      to: m.to as Hex,
      value: BigInt(m.value),
      validAfter: BigInt(m.validAfter),
      validBefore: BigInt(m.validBefore),
      nonce: m.nonce as Hex,
    };
    return { message, signature: stored.signature, payload: { ...m, signature: stored.signature } };
  }
  if (response.nextAction !== 'sign_x402_authorization')
    refuse('x402_missing', `the service did not ask for an authorization (nextAction ${String(response.nextAction)})`);
  const typed = checkX402Request(g, response, now);
  const m: X402Message = typed.message;
  const wire = {
    from: m.from,
    to: m.to,
    value: m.value.toString(),
    validAfter: m.validAfter.toString(),
    validBefore: m.validBefore.toString(),
    nonce: m.nonce,
  };
  // Admitted, signed and recorded in one write transaction, like a transaction: no other process (of any wallet) can
  // pass the policy's windows at the same moment, and the signature is on disk before the next request carries it.
  const account = await run.account;
  const entry = await run.ledger.admitAuthorization('ask', wire, client, () =>
    account.signTypedData(typed as unknown as Parameters<typeof account.signTypedData>[0]),
  );
  await journal.setStep('ask:x402_signed');
  ctx.out.progress(
    'ask.x402',
    `signed a USDC ReceiveWithAuthorization of ${formatUnits(m.value, 6)} USDC to the trusted submitter, valid until ${m.validBefore}`,
  );
  return { message: m, signature: entry.signature, payload: { ...wire, signature: entry.signature } };
}
