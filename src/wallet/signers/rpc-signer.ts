// A remote signer over JSON-RPC (Clef, Web3Signer, or any node with an unlocked account): eth_accounts,
// eth_signTransaction, eth_signTypedData_v4, personal_sign. There is no standard method to sign an EIP-7702
// authorization (eth_sign prefixes its input, so an authorization digest signed that way authorizes nothing): such a
// signer runs ordered plans only. Signers that only send (eth_sendTransaction) are not supported: loopsign journals
// the signed bytes before broadcasting them, and checks them first.
import {
  getTypesForEIP712Domain,
  numberToHex,
  serializeTypedData,
  toHex,
  type Hex,
  type LocalAccount,
  type SignableMessage,
  type TransactionSerializable,
} from 'viem';
import { toAccount } from 'viem/accounts';
import { CredentialError, RefusedError } from '../../errors.js';
import { sameAddress } from '../../hex.js';
import type { OpenedSigner } from './opened.js';
import type { Address } from './types.js';
import { beforeHttp } from '../../wasm-tier.js';

export const RPC_NO_AUTHORIZATION = 'a JSON-RPC signer has no method to sign an EIP-7702 authorization';

export interface RpcSignerOptions {
  /** How long one signing request may take (a signer that asks a human, like Clef, needs time). */
  timeoutMs?: number;
}

const quantity = (v: bigint | number | undefined) => (v === undefined ? undefined : numberToHex(v));

/** The transaction as eth_signTransaction takes it (hex quantities, the sender named). */
export function rpcTransaction(tx: TransactionSerializable, from: Address): Record<string, unknown> {
  const t = tx as TransactionSerializable & {
    authorizationList?: Array<{
      address?: Address;
      contractAddress?: Address;
      chainId: number;
      nonce: number;
      r: Hex;
      s: Hex;
      yParity?: number;
    }>;
  };
  const type = t.type ?? (t.authorizationList ? 'eip7702' : t.maxFeePerGas !== undefined ? 'eip1559' : t.accessList ? 'eip2930' : 'legacy');
  const out: Record<string, unknown> = {
    from,
    to: t.to ?? undefined,
    type: { legacy: '0x0', eip2930: '0x1', eip1559: '0x2', eip4844: '0x3', eip7702: '0x4' }[type],
    chainId: quantity(t.chainId),
    nonce: quantity(t.nonce),
    gas: quantity(t.gas),
    gasPrice: quantity(t.gasPrice as bigint | undefined),
    maxFeePerGas: quantity(t.maxFeePerGas as bigint | undefined),
    maxPriorityFeePerGas: quantity(t.maxPriorityFeePerGas as bigint | undefined),
    value: quantity(t.value ?? 0n),
    data: t.data ?? '0x',
    input: t.data ?? '0x',
    accessList: t.accessList,
    authorizationList: t.authorizationList?.map((a) => ({
      address: (a as { contractAddress?: Address }).contractAddress ?? a.address,
      chainId: numberToHex(a.chainId),
      nonce: numberToHex(a.nonce),
      r: a.r,
      s: a.s,
      yParity: numberToHex(a.yParity ?? 0),
    })),
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

export function rpcClient(rawUrl: string, label: string, timeoutMs: number) {
  beforeHttp();
  // fetch refuses URLs with credentials: user:password@ becomes a Basic authorization header.
  const url = new URL(rawUrl);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (url.username || url.password) {
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  let id = 0;
  return async function request<T>(method: string, params: unknown[]): Promise<T> {
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      throw new CredentialError(
        'signer_unreachable',
        `${label}: ${method} ${timedOut ? `got no answer within ${Math.round(timeoutMs / 1000)} s` : `could not reach the signer (${(error as Error).message})`}; nothing was signed`,
        {
          hint: 'check that the signer is running and reachable at that URL',
          cause: error,
        },
      );
    }
    let body: { result?: T; error?: { code?: number; message?: string } };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new CredentialError(
        'signer_unreachable',
        `${label}: ${method} answered HTTP ${res.status} without a JSON-RPC body; nothing was signed`,
      );
    }
    if (body.error) {
      // A signer that declines (a human said no in Clef, a Web3Signer rule) is a refusal, not a retryable fault.
      throw new RefusedError(
        'signer_declined',
        `${label} declined ${method}: ${String(body.error.message ?? 'no reason given').slice(0, 200)}; nothing was signed or sent`,
        {
          hint: "check the signer's rules and logs; loopsign does not retry a declined request",
          details: { rpcCode: body.error.code },
        },
      );
    }
    if (body.result === undefined)
      throw new CredentialError('signer_unreachable', `${label}: ${method} returned no result; nothing was signed`);
    return body.result;
  };
}

function messageHex(message: SignableMessage): Hex {
  if (typeof message === 'string') return toHex(message);
  return typeof message.raw === 'string' ? message.raw : toHex(message.raw);
}

export async function openRpcSigner(url: string, from: Address, label: string, options: RpcSignerOptions = {}): Promise<OpenedSigner> {
  const request = rpcClient(url, label, options.timeoutMs ?? 120_000);
  const accounts = await request<string[]>('eth_accounts', []);
  if (!Array.isArray(accounts) || !accounts.some((a) => sameAddress(a, from))) {
    throw new CredentialError(
      'signer_address_mismatch',
      `${label} does not hold --from ${from} (eth_accounts lists ${Array.isArray(accounts) ? accounts.length : 0} other account(s)); nothing was signed or sent`,
      {
        hint: 'pass an address the signer holds as --from, or unlock that account in the signer',
      },
    );
  }
  const account: LocalAccount = {
    ...toAccount({
      address: from,
      signMessage: ({ message }) => request<Hex>('personal_sign', [messageHex(message), from]),
      signTypedData: (typedData) => {
        const td = typedData as {
          domain?: Record<string, unknown>;
          types: Record<string, unknown>;
          primaryType: string;
          message: Record<string, unknown>;
        };
        const json = serializeTypedData({
          ...td,
          types: { EIP712Domain: getTypesForEIP712Domain({ domain: td.domain as never }), ...td.types },
        } as never);
        return request<Hex>('eth_signTypedData_v4', [from, json]);
      },
      signTransaction: async (tx) => {
        const result = await request<Hex | { raw?: Hex }>('eth_signTransaction', [rpcTransaction(tx as TransactionSerializable, from)]);
        // Clef and geth answer {raw, tx}; anvil and Web3Signer the raw bytes.
        return (typeof result === 'string' ? result : (result.raw ?? '0x')) as Hex;
      },
    }),
    publicKey: '0x',
  } as LocalAccount;
  return { account, close: async () => undefined };
}
