// An emulated Ledger for the Device Management Kit: a DMK transport (the kit's own Transport interface, the way
// USB HID plugs in) whose one device runs a model of the Ethereum app at the APDU level, with a real secp256k1 key
// (RFC 6979, as the app signs). It answers what the kit sends: the dashboard's GET_APP_AND_VERSION (B0 01), and
// the app's GET_APP_CONFIGURATION (E0 06), GET_ADDRESS (E0 02), SIGN (E0 04, chunked, typed transactions),
// SIGN_PERSONAL_MESSAGE (E0 08), the EIP-712 full flow (struct definitions E0 1A, implementations E0 1C, then
// SIGN_EIP712 E0 0C in full or hashed mode) and SIGN_EIP7702_AUTHORIZATION (E0 34, TLV, with the app's whitelist:
// 0x6980 for a delegate off the list). The digests it signs are rebuilt from the APDUs alone, so a wrong byte on
// the wire gives a signature the wallet's guard refuses. A "human" answers each confirmation: approve, reject
// (0x6985, as the app answers a rejection), or never (the device waits until the kit cancels).
// Formats follow LedgerHQ/app-ethereum doc/ethapp.adoc and its Python client (status words, 7702 TLV tags).
import { of } from 'rxjs';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, concatHex, hashMessage, hashTypedData, hexToBytes, keccak256, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

export type Human = 'approve' | 'reject' | 'never';
export type Prompt = 'transaction' | 'typedData' | 'message' | 'authorization';

export interface EmulatedLedger {
  address: Hex;
  /** Every APDU the kit sent, as hex (CLA INS P1 P2 Lc data). */
  apdus: string[];
  prompts: Prompt[];
  /** How many times the kit closed its connection to the device. */
  disconnects: number;
  human: Human;
  eip7702Enabled: boolean;
  whitelist: string[];
  /** A lying device: signs with this key instead of the one it reports. */
  signWith?: Hex;
  transportFactory: (args: { deviceModelDataSource: { getDeviceModel(p: { id: string }): unknown } }) => unknown;
}

const SW = { ok: [0x90, 0x00], rejected: [0x69, 0x85], notAllowed: [0x69, 0x80], badIns: [0x6d, 0x00], badData: [0x6a, 0x80] } as const;

function pathLength(data: Uint8Array): number {
  return 1 + data[0]! * 4;
}

/** Total length of a typed transaction (type byte + RLP list), once enough bytes are in; undefined until then. */
function typedTxLength(tx: Uint8Array): number | undefined {
  if (tx.length < 2) return undefined;
  const offset = tx[0]! < 0x80 ? 1 : 0;
  const head = tx[offset]!;
  if (head >= 0xc0 && head <= 0xf7) return offset + 1 + (head - 0xc0);
  if (head > 0xf7) {
    const n = head - 0xf7;
    if (tx.length < offset + 1 + n) return undefined;
    let len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + tx[offset + 1 + i]!;
    return offset + 1 + n + len;
  }
  return undefined;
}

// EIP-712 field type descriptors (ethapp.adoc "EIP712 SEND STRUCT DEFINITION").
const BASE = ['', 'int', 'uint', 'address', 'bool', 'string', 'bytes', 'bytes'];

type Frame =
  | { kind: 'struct'; name: string; i: number; value: Record<string, unknown> }
  | { kind: 'array'; type: string; n: number; value: unknown[] };

export function emulatedLedger(privateKey: Hex, options: { whitelist?: string[] } = {}): EmulatedLedger {
  const account = privateKeyToAccount(privateKey);
  const device: EmulatedLedger = {
    address: account.address,
    apdus: [],
    prompts: [],
    disconnects: 0,
    human: 'approve',
    eip7702Enabled: true,
    whitelist: (options.whitelist ?? ['0x4Cd241E8d1510e30b2076397afc7508Ae59C66c9']).map((a) => a.toLowerCase()),
    transportFactory: () => undefined,
  };

  const sign = (digest: Hex): Uint8Array => {
    const sig = secp256k1.sign(hexToBytes(digest), hexToBytes(device.signWith ?? privateKey), { prehash: false });
    return new Uint8Array([sig.recovery, ...sig.toCompactRawBytes()]);
  };
  /** v ‖ r ‖ s as the app answers (v: 27/28 for messages, the parity for typed transactions). */
  const answer = (digest: Hex, v: (parity: number) => number): Uint8Array => {
    const recovered = sign(digest); // recovery ‖ r ‖ s
    return new Uint8Array([v(recovered[0]!), ...recovered.slice(1, 65)]);
  };

  // Pending multi-APDU operations.
  let tx: Uint8Array | undefined;
  let personal: { length: number; data: number[] } | undefined;
  let auth: { length: number; data: number[] } | undefined;
  const types: Record<string, Array<{ name: string; type: string }>> = {};
  let currentStruct = '';
  let roots: Array<{ name: string; value: Record<string, unknown> }> = [];
  let stack: Frame[] = [];
  let fieldBuffer: number[] = [];

  const fieldsOf = (frame: Frame & { kind: 'struct' }) => types[frame.name]!;
  const settle = () => {
    for (;;) {
      const top = stack.at(-1);
      if (!top) return;
      const done = top.kind === 'struct' ? top.i >= fieldsOf(top).length : top.value.length >= top.n;
      if (!done) return;
      stack.pop();
      const parent = stack.at(-1);
      if (!parent) return;
      if (parent.kind === 'struct') (parent.value[fieldsOf(parent)[parent.i]!.name] = top.value), parent.i++;
      else parent.value.push(top.value);
    }
  };
  /** The type the next value fills, entering nested structs on the way. */
  const nextType = (): string => {
    for (;;) {
      const top = stack.at(-1)!;
      const type = top.kind === 'struct' ? fieldsOf(top)[top.i]!.type : top.type;
      if (!type.endsWith(']') && types[type]) {
        stack.push({ kind: 'struct', name: type, i: 0, value: {} });
        continue;
      }
      return type;
    }
  };
  const decode = (type: string, bytes: Uint8Array): unknown => {
    const hex = bytesToHex(bytes);
    if (type.startsWith('uint')) return bytes.length ? BigInt(hex) : 0n;
    if (type.startsWith('int')) {
      const n = bytes.length ? BigInt(hex) : 0n;
      const bits = BigInt(bytes.length * 8);
      return bytes.length && bytes[0]! & 0x80 ? n - (1n << bits) : n;
    }
    if (type === 'address') return hex;
    if (type === 'bool') return bytes[0] === 1;
    if (type === 'string') return new TextDecoder().decode(bytes);
    return hex; // bytes, bytesN
  };

  const confirm = (prompt: Prompt): 'approve' | 'reject' | 'never' => {
    device.prompts.push(prompt);
    return device.human;
  };

  function handle(apdu: Uint8Array): { data: Uint8Array; sw: readonly number[] } | 'never' {
    const [cla, ins, p1, p2] = [apdu[0]!, apdu[1]!, apdu[2]!, apdu[3]!];
    const data = apdu.slice(5, 5 + apdu[4]!);
    const none = new Uint8Array();
    if (cla === 0xb0 && ins === 0x01) {
      const name = new TextEncoder().encode('Ethereum');
      const version = new TextEncoder().encode('1.22.0');
      return { data: new Uint8Array([1, name.length, ...name, version.length, ...version, 1, 0x02]), sw: SW.ok };
    }
    if (cla !== 0xe0) return { data: none, sw: [0x6e, 0x00] };
    switch (ins) {
      case 0x06: // GET_APP_CONFIGURATION: blind signing on, web3 checks already answered (opt-in done, off)
        return { data: new Uint8Array([0x01 | 0x20, 1, 22, 0]), sw: SW.ok };
      case 0x02: {
        const publicKey = hexToBytes(account.publicKey);
        const address = new TextEncoder().encode(account.address.slice(2));
        return { data: new Uint8Array([publicKey.length, ...publicKey, address.length, ...address]), sw: SW.ok };
      }
      case 0x04: {
        tx = p1 === 0x00 ? data.slice(pathLength(data)) : new Uint8Array([...(tx ?? []), ...data]);
        const length = typedTxLength(tx);
        if (length === undefined || tx.length < length) return { data: none, sw: SW.ok };
        const digest = keccak256(tx.slice(0, length));
        tx = undefined;
        const human = confirm('transaction');
        if (human === 'never') return 'never';
        if (human === 'reject') return { data: none, sw: SW.rejected };
        return { data: answer(digest, (parity) => parity), sw: SW.ok };
      }
      case 0x08: {
        if (p1 === 0x00) {
          const start = pathLength(data);
          const view = new DataView(data.buffer, data.byteOffset + start, 4);
          personal = { length: view.getUint32(0), data: [...data.slice(start + 4)] };
        } else personal!.data.push(...data);
        if (personal!.data.length < personal!.length) return { data: none, sw: SW.ok };
        const digest = hashMessage({ raw: new Uint8Array(personal!.data) });
        personal = undefined;
        const human = confirm('message');
        if (human === 'never') return 'never';
        if (human === 'reject') return { data: none, sw: SW.rejected };
        return { data: answer(digest, (parity) => 27 + parity), sw: SW.ok };
      }
      case 0x1a: {
        // EIP-712 struct definitions: a name (P2 00), then its fields (P2 FF).
        if (p2 === 0x00) {
          currentStruct = new TextDecoder().decode(data);
          types[currentStruct] = [];
          return { data: none, sw: SW.ok };
        }
        let i = 0;
        const desc = data[i++]!;
        const isArray = (desc & 0x80) !== 0;
        let type = BASE[desc & 0x0f]!;
        if ((desc & 0x0f) === 0) {
          const n = data[i++]!;
          type = new TextDecoder().decode(data.slice(i, i + n));
          i += n;
        }
        if (desc & 0x40) {
          const size = data[i++]!;
          type += String((desc & 0x0f) === 6 ? size : size * 8);
        }
        if (isArray) {
          const levels = data[i++]!;
          for (let l = 0; l < levels; l++) type += data[i++] === 1 ? `[${data[i++]}]` : '[]';
        }
        const nameLength = data[i++]!;
        types[currentStruct]!.push({ name: new TextDecoder().decode(data.slice(i, i + nameLength)), type });
        return { data: none, sw: SW.ok };
      }
      case 0x1c: {
        // EIP-712 implementations: a root struct (P2 00), an array size (P2 0F), a field value (P2 FF, chunked).
        if (p2 === 0x00) {
          const name = new TextDecoder().decode(data);
          if (!types[name]) return { data: none, sw: SW.badData };
          const root = { name, value: {} as Record<string, unknown> };
          roots.push(root);
          stack = [{ kind: 'struct', name, i: 0, value: root.value }];
          return { data: none, sw: SW.ok };
        }
        if (p2 === 0x0f) {
          const type = nextType();
          stack.push({ kind: 'array', type: type.replace(/\[\d*\]$/, ''), n: data[0]!, value: [] });
          settle();
          return { data: none, sw: SW.ok };
        }
        fieldBuffer.push(...data);
        if (p1 === 0x01) return { data: none, sw: SW.ok }; // more chunks of this value follow
        const length = (fieldBuffer[0]! << 8) | fieldBuffer[1]!;
        const bytes = new Uint8Array(fieldBuffer.slice(2, 2 + length));
        fieldBuffer = [];
        const type = nextType();
        const top = stack.at(-1)!;
        if (top.kind === 'struct') (top.value[fieldsOf(top)[top.i]!.name] = decode(type, bytes)), top.i++;
        else top.value.push(decode(type, bytes));
        settle();
        return { data: none, sw: SW.ok };
      }
      case 0x0c: {
        let digest: Hex;
        if (p2 === 0x00) {
          const start = pathLength(data);
          digest = keccak256(
            concatHex(['0x1901', bytesToHex(data.slice(start, start + 32)), bytesToHex(data.slice(start + 32, start + 64))]),
          );
        } else {
          const domain = roots.find((r) => r.name === 'EIP712Domain');
          const message = roots.filter((r) => r.name !== 'EIP712Domain').at(-1);
          if (!domain || !message) return { data: none, sw: SW.badData };
          const { EIP712Domain: _domain, ...messageTypes } = types;
          digest = hashTypedData({
            domain: domain.value as never,
            types: messageTypes as never,
            primaryType: message.name,
            message: message.value as never,
          });
        }
        roots = [];
        const human = confirm('typedData');
        if (human === 'never') return 'never';
        if (human === 'reject') return { data: none, sw: SW.rejected };
        return { data: answer(digest, (parity) => 27 + parity), sw: SW.ok };
      }
      case 0x34: {
        if (p1 === 0x01) {
          const start = pathLength(data);
          auth = { length: (data[start]! << 8) | data[start + 1]!, data: [...data.slice(start + 2)] };
        } else auth!.data.push(...data);
        if (auth!.data.length < auth!.length) return { data: none, sw: SW.ok };
        const tlv = new Map<number, Uint8Array>();
        for (let i = 0; i < auth!.data.length; ) {
          const tag = auth!.data[i]!;
          const length = auth!.data[i + 1]!;
          tlv.set(tag, new Uint8Array(auth!.data.slice(i + 2, i + 2 + length)));
          i += 2 + length;
        }
        auth = undefined;
        const delegate = bytesToHex(tlv.get(1) ?? new Uint8Array());
        const chainId = Number(bytesToHex(tlv.get(2) ?? new Uint8Array([0])));
        const nonce = Number(bytesToHex(tlv.get(3) ?? new Uint8Array([0])));
        if (tlv.get(0)?.[0] !== 1 || delegate.length !== 42) return { data: none, sw: SW.badData };
        if (!device.eip7702Enabled || !device.whitelist.includes(delegate.toLowerCase())) return { data: none, sw: SW.notAllowed };
        const rlp = (n: number): Hex =>
          n === 0
            ? '0x80'
            : n < 0x80
              ? (`0x${n.toString(16).padStart(2, '0')}` as Hex)
              : (() => {
                  const h = n.toString(16).padStart(Math.ceil(n.toString(16).length / 2) * 2, '0');
                  return `0x${(0x80 + h.length / 2).toString(16)}${h}` as Hex;
                })();
        const body = concatHex([rlp(chainId), `0x94${delegate.slice(2)}`, rlp(nonce)]);
        const digest = keccak256(concatHex(['0x05', `0x${(0xc0 + (body.length - 2) / 2).toString(16)}`, body]));
        const human = confirm('authorization');
        if (human === 'never') return 'never';
        if (human === 'reject') return { data: none, sw: SW.rejected };
        return { data: answer(digest, (parity) => parity), sw: SW.ok };
      }
      default:
        return { data: none, sw: SW.badIns };
    }
  }

  device.transportFactory = ({ deviceModelDataSource }) => {
    const identifier = 'LOOPSIGN_EMULATED';
    const discovered = () => ({
      id: 'emulated-ledger-1',
      deviceModel: deviceModelDataSource.getDeviceModel({ id: 'nanoX' }),
      transport: identifier,
      name: 'Emulated Nano X',
    });
    return {
      getIdentifier: () => identifier,
      isSupported: () => true,
      startDiscovering: () => of(discovered()),
      stopDiscovering: () => undefined,
      listenToAvailableDevices: () => of([discovered()]),
      connect: async ({ deviceId }: { deviceId: string }) => {
        const { Right } = await import('purify-ts');
        const { ApduResponse, TransportConnectedDevice } = await import('@ledgerhq/device-management-kit');
        return Right(
          new TransportConnectedDevice({
            id: deviceId,
            deviceModel: discovered().deviceModel as never,
            type: 'USB',
            transport: identifier,
            sendApdu: (apdu: Uint8Array, _triggersDisconnection?: boolean, abortTimeout?: number) => {
              device.apdus.push(bytesToHex(apdu).slice(2));
              const result = handle(apdu);
              if (result === 'never') {
                // The human never answers: the exchange stays open until the kit gives up on it.
                return new Promise((resolve) => {
                  if (abortTimeout)
                    setTimeout(
                      () => resolve(Right(new ApduResponse({ statusCode: new Uint8Array(SW.rejected), data: new Uint8Array() }))),
                      abortTimeout,
                    ).unref();
                });
              }
              return Promise.resolve(Right(new ApduResponse({ statusCode: new Uint8Array(result.sw), data: result.data })));
            },
          }),
        );
      },
      disconnect: async () => {
        device.disconnects++;
        const { Right } = await import('purify-ts');
        return Right(undefined);
      },
    };
  };
  return device;
}
