// A JSON-RPC proxy on 127.0.0.1 in front of anvil's own signing methods (eth_signTransaction, eth_signTypedData_v4,
// personal_sign for its unlocked accounts), which can turn hostile: sign with another unlocked account, sign a
// transaction with one field changed, return high-s signatures, or decline.
import { createServer, type Server } from 'node:http';
import { parseTransaction, serializeTransaction, type Hex } from 'viem';
import { SECP256K1_N } from '../../src/wallet/signers/signature.js';

export type HostileMode = 'honest' | 'other-signer' | 'change-value' | 'change-to' | 'high-s' | 'decline';

export interface HostileRpc {
  url: (auth?: string) => string;
  methods: string[];
  authorizations: string[];
  mode: HostileMode;
  stop(): Promise<void>;
}

const flipS = (sig: Hex): Hex => {
  const s = SECP256K1_N - BigInt(`0x${sig.slice(66, 130)}`);
  const v = sig.slice(130) === '1b' ? '1c' : '1b';
  return `${sig.slice(0, 66)}${s.toString(16).padStart(64, '0')}${v}` as Hex;
};

export async function startHostileRpc(upstream: string, otherAccount: string): Promise<HostileRpc> {
  const state: HostileRpc = { url: () => '', methods: [], authorizations: [], mode: 'honest', stop: async () => undefined };
  const forward = async (body: { method: string; params: unknown[] }) => {
    const res = await fetch(upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
    });
    return (await res.json()) as { result?: unknown; error?: unknown };
  };
  const server: Server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8').on('data', (c: string) => (text += c));
    req.on('end', async () => {
      const call = JSON.parse(text) as { id: number; method: string; params: unknown[] };
      state.methods.push(call.method);
      state.authorizations.push(String(req.headers.authorization ?? ''));
      const reply = (doc: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...(doc as object) }));
      };
      const signing = ['eth_signTransaction', 'eth_signTypedData_v4', 'personal_sign'].includes(call.method);
      if (signing && state.mode === 'decline') return reply({ error: { code: -32000, message: 'request denied by the signer rules' } });
      const params = structuredClone(call.params) as Array<Record<string, unknown> | string>;
      if (state.mode === 'other-signer') {
        if (call.method === 'eth_signTransaction') (params[0] as Record<string, unknown>).from = otherAccount;
        if (call.method === 'eth_signTypedData_v4') params[0] = otherAccount;
        if (call.method === 'personal_sign') params[1] = otherAccount;
      }
      if (call.method === 'eth_signTransaction') {
        const tx = params[0] as Record<string, string>;
        if (state.mode === 'change-value') tx.value = `0x${(BigInt(tx.value ?? '0x0') + 1n).toString(16)}`;
        if (state.mode === 'change-to') tx.to = otherAccount;
      }
      const answer = await forward({ method: call.method, params });
      if (state.mode === 'high-s' && typeof answer.result === 'string') {
        if (call.method === 'eth_signTransaction') {
          const tx = parseTransaction(answer.result as Hex);
          const s = SECP256K1_N - BigInt(tx.s!);
          answer.result = serializeTransaction(tx, {
            r: tx.r!,
            s: `0x${s.toString(16).padStart(64, '0')}`,
            yParity: tx.yParity === 1 ? 0 : 1,
          });
        } else if (signing) {
          answer.result = flipS(answer.result as Hex);
        }
      }
      reply(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  state.url = (auth?: string) => `http://${auth ? `${auth}@` : ''}127.0.0.1:${port}/signer`;
  state.stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}
