// Ledger through Ledger's Device Management Kit and its Ethereum signer kit, loaded only when --signer ledger is
// used (an optional dependency, ~90 MB). loopsign gives the signer kit an offline context module: no request goes
// to Ledger's servers (clear-signing metadata, transaction checks, blind-signing reports), so the device shows the
// raw transaction or asks for blind signing, and loopsign's own guards, which ran before, are the real check.
// Each device action reports its prompt as progress, and waits at most `timeoutMs` (default 120 s) before it is
// cancelled on the device (exit 7, nothing signed). A rejection on the device is a refusal (exit 5).
import {
  getTypesForEIP712Domain,
  serializeTypedData,
  serializeTransaction,
  hexToBytes,
  serializeSignature,
  type Hex,
  type LocalAccount,
  type SignableMessage,
} from 'viem';
import { toAccount } from 'viem/accounts';
import { CredentialError, NotReadyError, RefusedError } from '../../errors.js';
import { sameAddress } from '../../hex.js';
import { loadSdk } from './load-sdk.js';
import type { OpenedSigner } from './opened.js';
import type { Address, ProgressSink } from './types.js';

export const LEDGER_SDK = {
  install:
    '@ledgerhq/device-management-kit@1.10.0 @ledgerhq/device-signer-kit-ethereum@1.18.1 @ledgerhq/context-module@2.6.0 @ledgerhq/device-transport-kit-node-hid@1.0.1 rxjs@7.8.2',
  forWhat: '--signer ledger',
};
export const DEFAULT_DEVICE_TIMEOUT_MS = 120_000;

export interface LedgerOptions {
  /** A DMK transport factory; the default is USB HID (@ledgerhq/device-transport-kit-node-hid). Tests pass an emulated device. */
  transportFactory?: unknown;
  /** How long to wait for the device (finding it, and each confirmation) before cancelling. */
  timeoutMs?: number;
  progress?: ProgressSink;
  chainId?: number;
  /** Whether to offer EIP-7702 authorizations at all (the pinned delegate is on the app's whitelist). */
  authorization?: boolean;
}

type DmkSignature = { r: string; s: string; v: number };
type ActionState = { status: string; output?: unknown; error?: unknown; intermediateValue?: { requiredUserInteraction?: string } };
type Action = {
  observable: { subscribe(o: { next(s: ActionState): void; error(e: unknown): void; complete(): void }): { unsubscribe(): void } };
  cancel(): void;
};

/** A clear-signing context module that knows nothing and asks nobody. */
const offlineContextModule = {
  getContexts: async () => [],
  getFieldContext: async () => ({ type: 'error', error: new Error('no clear-signing metadata offline') }),
  getTypedDataFilters: async () => ({ type: 'error', error: new Error('no clear-signing metadata offline') }),
  report: async () => undefined,
  signReport: async () => undefined,
};

const PROMPTS: Record<string, string> = {
  'unlock-device': 'unlock the Ledger (enter its PIN)',
  'confirm-open-app': 'confirm opening the Ethereum app on the Ledger',
  'sign-transaction': 'review and sign the transaction on the Ledger',
  'sign-typed-data': 'review and sign the typed data (EIP-712) on the Ledger',
  'sign-personal-message': 'review and sign the message on the Ledger',
  'sign-delegation-authorization': 'review and sign the EIP-7702 delegation on the Ledger',
  'verify-address': 'check the address on the Ledger',
  'web3-checks-opt-in': 'answer the transaction-check question on the Ledger',
};

function errorCodeOf(error: unknown): string | undefined {
  const code =
    (error as { errorCode?: unknown })?.errorCode ?? (error as { originalError?: { errorCode?: unknown } })?.originalError?.errorCode;
  return typeof code === 'string' ? code.toLowerCase() : undefined;
}

function deviceFailure(error: unknown, label: string, what: string): Error {
  const code = errorCodeOf(error);
  if (code === '6985' || code === '5501') {
    return new RefusedError('device_rejected', `${what} was rejected on the Ledger; nothing was signed or sent`, {
      hint: 'loopsign does not retry a rejection: run the command again to be asked again',
    });
  }
  if (code === '6982') {
    return new RefusedError('device_rejected', `${what} was cancelled on the Ledger; nothing was signed or sent`, {
      hint: 'loopsign does not retry a rejection: run the command again to be asked again',
    });
  }
  if (code === '6980' && what.includes('delegation')) {
    // The app's COMMAND_NOT_ALLOWED: its EIP-7702 setting is off, or the delegate is not on its whitelist.
    return new RefusedError(
      'signer_cannot_delegate',
      `the Ledger's Ethereum app refused ${what}: its EIP-7702 setting is off, or the delegate is not on the app's whitelist; nothing was signed or sent`,
      {
        hint: 'turn on the EIP-7702 setting in the Ethereum app, or run the plan ordered (without --atomic)',
      },
    );
  }
  if (code === '5515') {
    return new CredentialError('device_locked', `${label}: the Ledger is locked; nothing was signed`, {
      hint: 'unlock it with its PIN and run the command again',
    });
  }
  if (code === '6a83' || code === '6d00' || code === '6e00' || code === '6e01' || code === '6d02') {
    return new CredentialError(
      'device_wrong_app',
      `${label}: the Ethereum app is not open on the Ledger (or is outdated); nothing was signed`,
      { hint: 'open the Ethereum app (update it in Ledger Live if needed) and run the command again' },
    );
  }
  const message = (error as { message?: string })?.message ?? (error as { _tag?: string })?._tag ?? 'unknown device error';
  return new CredentialError(
    'device_error',
    `${label}: ${what} failed on the Ledger (${code ? `status ${code}: ` : ''}${String(message).slice(0, 200)}); nothing was signed`,
    { cause: error },
  );
}

export async function openLedger(path: string, from: Address, label: string, options: LedgerOptions = {}): Promise<OpenedSigner> {
  const dmkSdk = await loadSdk(() => import('@ledgerhq/device-management-kit'), LEDGER_SDK);
  const ethSdk = await loadSdk(() => import('@ledgerhq/device-signer-kit-ethereum'), LEDGER_SDK);
  const transportFactory =
    options.transportFactory ??
    (await loadSdk(() => import('@ledgerhq/device-transport-kit-node-hid'), LEDGER_SDK)).nodeHidTransportFactory;
  const timeoutMs = options.timeoutMs ?? DEFAULT_DEVICE_TIMEOUT_MS;
  const progress = options.progress ?? (() => undefined);
  const dmkPath = path.replace(/^m\//, '');
  const dmk = new dmkSdk.DeviceManagementKitBuilder().addTransport(transportFactory as never).build();
  let sessionId: string | undefined;

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    const id = sessionId;
    sessionId = undefined;
    if (id) await dmk.disconnect({ sessionId: id }).catch(() => undefined);
    dmk.close();
  };

  /** Runs one device action to its end: prompts as progress, a bounded wait, then cancel on the device. */
  const run = <T>(action: Action, what: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      let lastPrompt: string | undefined;
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        subscription?.unsubscribe();
        fn();
      };
      const timer = setTimeout(() => {
        // Settled first: cancelling makes the action report "stopped", which is this timeout, not another failure.
        finish(() =>
          reject(
            new NotReadyError(
              'device_timeout',
              `no answer from the Ledger within ${Math.round(timeoutMs / 1000)} s for ${what}; it was cancelled and nothing was signed`,
              { hint: 'dismiss the prompt on the device if it still shows one, then run the command again and confirm on the device' },
            ),
          ),
        );
        action.cancel();
        // The kit cannot withdraw an APDU the device is still holding: the session is closed so that the device is
        // released and a late confirmation reaches nobody. This wallet signs nothing more.
        void close();
      }, timeoutMs);
      let subscription: { unsubscribe(): void } | undefined;
      subscription = action.observable.subscribe({
        next: (state) => {
          if (state.status === 'pending') {
            const need = state.intermediateValue?.requiredUserInteraction;
            if (need && need !== 'none' && need !== lastPrompt) {
              lastPrompt = need;
              progress({ event: 'signer.device', message: `${PROMPTS[need] ?? `confirm on the Ledger (${need})`}: ${what}` });
            }
          } else if (state.status === 'completed') {
            finish(() => resolve(state.output as T));
          } else if (state.status === 'error') {
            finish(() => reject(deviceFailure(state.error, label, what)));
          } else if (state.status === 'stopped') {
            finish(() => reject(new NotReadyError('device_stopped', `${what} was stopped before the Ledger answered; nothing was signed`)));
          }
        },
        error: (error) => finish(() => reject(deviceFailure(error, label, what))),
        complete: () =>
          finish(() =>
            reject(new CredentialError('device_error', `${label}: the Ledger ended ${what} without an answer; nothing was signed`)),
          ),
      });
      if (settled) subscription.unsubscribe();
    });

  try {
    progress({ event: 'signer.device', message: 'connect and unlock the Ledger, and open its Ethereum app' });
    const device = await new Promise<unknown>((resolve, reject) => {
      let found = false;
      let sub: { unsubscribe(): void } | undefined;
      const stop = () => {
        clearTimeout(timer);
        sub?.unsubscribe();
        void dmk.stopDiscovering();
      };
      const timer = setTimeout(() => {
        stop();
        reject(
          new NotReadyError('device_timeout', `no Ledger found within ${Math.round(timeoutMs / 1000)} s; nothing was signed`, {
            hint: "plug it in, unlock it, close Ledger Live (it holds the device), and on Linux install Ledger's udev rules",
          }),
        );
      }, timeoutMs);
      sub = dmk.startDiscovering({}).subscribe({
        next: (d: unknown) => {
          if (found) return;
          found = true;
          resolve(d);
          // A transport may answer while subscribing (before `sub` is set): stop once it is.
          queueMicrotask(stop);
        },
        error: (e: unknown) => {
          stop();
          reject(
            new CredentialError('device_unavailable', `${label}: cannot look for a Ledger (${(e as Error)?.message ?? e})`, { cause: e }),
          );
        },
      });
      if (found) stop();
    });
    sessionId = await dmk.connect({ device: device as never });
    const signer = new ethSdk.SignerEthBuilder({ dmk, sessionId }).withContextModule(offlineContextModule as never).build();

    const got = await run<{ address: string }>(
      signer.getAddress(dmkPath, { checkOnDevice: false, chainId: options.chainId }) as unknown as Action,
      'reading the address',
    );
    if (!sameAddress(got.address, from)) {
      throw new CredentialError(
        'signer_address_mismatch',
        `${label}: the Ledger holds ${got.address} at ${path}, not --from ${from}; nothing was signed or sent`,
        {
          hint: "pass that address as --from, or give the derivation path of --from (ledger:m/44'/60'/0'/0/N)",
        },
      );
    }

    const sig = (s: DmkSignature) => {
      const yParity = s.v >= 35 ? (s.v - 35) % 2 : s.v >= 27 ? s.v - 27 : s.v % 2;
      return { r: s.r as Hex, s: s.s as Hex, yParity: yParity as 0 | 1 };
    };
    const account: LocalAccount = {
      ...toAccount({
        address: from,
        signMessage: async ({ message }: { message: SignableMessage }) => {
          const payload = typeof message === 'string' ? message : typeof message.raw === 'string' ? hexToBytes(message.raw) : message.raw;
          return serializeSignature(
            sig(await run<DmkSignature>(signer.signMessage(dmkPath, payload) as unknown as Action, 'a message (EIP-191)')),
          );
        },
        signTypedData: async (typedData) => {
          const td = typedData as {
            domain?: Record<string, unknown>;
            types: Record<string, unknown>;
            primaryType: string;
            message: Record<string, unknown>;
          };
          // The kit takes JSON values (bigints as decimal strings), with the domain's type spelled out.
          const json = JSON.parse(
            serializeTypedData({
              ...td,
              types: { EIP712Domain: getTypesForEIP712Domain({ domain: td.domain as never }), ...td.types },
            } as never),
          );
          return serializeSignature(
            sig(
              await run<DmkSignature>(signer.signTypedData(dmkPath, json) as unknown as Action, `typed data ${td.primaryType} (EIP-712)`),
            ),
          );
        },
        signTransaction: async (tx, opts) => {
          const serializer = (opts?.serializer ?? serializeTransaction) as typeof serializeTransaction;
          const s = sig(
            await run<DmkSignature>(
              signer.signTransaction(dmkPath, hexToBytes(serializer(tx))) as unknown as Action,
              `a transaction (nonce ${tx.nonce})`,
            ),
          );
          return serializer(tx, { ...s, v: 27n + BigInt(s.yParity) });
        },
        ...(options.authorization
          ? {
              signAuthorization: async (request) => {
                const address = (request.contractAddress ?? request.address) as Address;
                const s = sig(
                  await run<DmkSignature>(
                    signer.signDelegationAuthorization(dmkPath, request.chainId, address, request.nonce) as unknown as Action,
                    `the EIP-7702 delegation to ${address}`,
                  ),
                );
                return { address, chainId: request.chainId, nonce: request.nonce, ...s };
              },
            }
          : {}),
      }),
      publicKey: '0x',
    } as LocalAccount;
    return { account, close };
  } catch (error) {
    await close();
    throw error;
  }
}
