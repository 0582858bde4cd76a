// An in-process chain for the slot model test (test/slot-model.test.ts): the JSON-RPC methods loopsign's executor,
// store and ledger use, answered from a small model instead of anvil, so one generated case runs in milliseconds.
// What it keeps, and why:
// - One canonical chain of blocks with a finalized pointer. A reorg cuts the unfinalized tail; the blocks mined after
//   it get new hashes (a fork counter is hashed in), so an old receipt's block hash no longer matches.
// - A world pool of EVERY signed transaction anyone could hold: each broadcast, each journaled record (even one whose
//   broadcast never happened: the journal is the worst case of who may have the bytes) and foreign transactions
//   signed with the wallet's key by software outside loopsign. The adversary's Mine may include any of them whose
//   nonce fits. The mempool is the subset the network was told about (what an honest miner takes).
// - Nodes are views of that one chain (NodeView): honest; lagging (reads at head - lag, a pending count behind);
//   liars (a false "nonce too low", a mined transaction hidden, a forged receipt of the transaction that took the
//   nonce, a wrong block 0, a finalized count ahead of the chain). A node never makes the chain do anything: a lie
//   changes only what loopsign reads.
// - Effects: a transaction carries the calls callsOfRawTransaction reads from its bytes (loopsign's own decoder),
//   so the test counts call digests per canonical transaction; foreign transactions carry none.
import {
  createPublicClient,
  custom,
  defineChain,
  keccak256,
  parseTransaction,
  recoverTransactionAddress,
  toHex,
  type Hex,
  type PublicClient,
} from 'viem';
import { callsOfRawTransaction, type CallLike } from '../../src/wallet/spend-effects.js';

export interface SimTx {
  raw: Hex;
  hash: Hex;
  from: Hex;
  to: Hex;
  nonce: number;
  input: Hex;
  /** The calls its bytes carry (none for a foreign transaction or one loopsign's decoder cannot read). */
  calls: CallLike[];
  /** Order first seen: the adversary's choices among candidates are indexes in this order (replayable). */
  seen: number;
}

interface Block {
  number: number;
  hash: Hex;
  parentHash: Hex;
  timestamp: number;
  txs: Hex[];
}

/**
 * What one node answers. Sends always reach the network (the mempool); reads come from the node's own backend, so a
 * lagging node is also the "split" node of notes/nonce-slots.md §4.1 (sends to one backend, reads from another).
 */
export interface NodeView {
  name: string;
  /** Reads (receipts, transactions, counts, blocks) answered at head - lag. */
  lag: number;
  /** The pending count reported this many below the truth (a load balancer's backend that missed the last sends). */
  pendingBehind: number;
  /** sendRawTransaction answers "nonce too low" and drops the transaction. */
  falseTooLow: boolean;
  /** A mined transaction with this nonce is hidden: no receipt, no transaction, its rebroadcast "nonce too low". */
  hideNonce?: number;
  /**
   * A transaction off the chain whose nonce another took gets a forged receipt: 'taker', the taker's receipt as it is
   * (another transactionHash); 'own', the taker's block and status under the asked hash (a forger that fits its lie).
   */
  forgeReceipt: false | 'taker' | 'own';
  /** Block 0 answered with another hash. */
  wrongGenesis: boolean;
  /**
   * With hideNonce: the hidden transaction's entry in its block's body is replaced, so the block still shows the nonce
   * used: 'forged', by a made-up transaction of the wallet (another hash, its own fields and signature copied);
   * 'renamed', by the hidden transaction itself under another hash.
   */
  forgeBody?: 'forged' | 'renamed';
  /**
   * A lie about finality. 'head': the head answered as finalized (a consistent lie: the residual risk of
   * notes/nonce-slots.md §3.7). 'beyond': the head as finalized, with a transaction count one past the latest count
   * (an answer no honest node can give).
   */
  finalityLie?: 'head' | 'beyond';
  /**
   * With hideNonce: the block holding the hidden transaction is answered with another hash, and in its body the hidden
   * transaction is replaced by a forged one of the wallet at that nonce (another input and hash, the signature copied:
   * a node cannot sign for the wallet). What a node must fake to make a mined record look reorganised away. 'signed':
   * the taker shown is a transaction the wallet did sign at that nonce and that is not mined (a cancel of the slot,
   * say), as the node got it, when there is one.
   */
  forgeBlock?: boolean | 'signed';
  /** Every block's base fee answered as this many gwei (the chain's own is 1): open transactions look underpriced. */
  baseFeeGwei?: number;
}

export const HONEST: NodeView = {
  name: 'honest',
  lag: 0,
  pendingBehind: 0,
  falseTooLow: false,
  forgeReceipt: false,
  wrongGenesis: false,
};

const GWEI = 1_000_000_000n;
const hex = (n: number | bigint) => toHex(n);
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

// Signing is deterministic, so the same bytes recur across cases: their decoding (a public-key recovery, the
// costliest step of a case) is kept.
const decoded = new Map<Hex, Omit<SimTx, 'seen'>>();
async function decode(raw: Hex, hash: Hex): Promise<Omit<SimTx, 'seen'>> {
  let d = decoded.get(hash);
  if (!d) {
    const parsed = parseTransaction(raw);
    const from = (await recoverTransactionAddress({ serializedTransaction: raw as never })).toLowerCase() as Hex;
    let calls: CallLike[] = [];
    try {
      calls = callsOfRawTransaction(raw, from);
    } catch {}
    d = { raw, hash, from, to: parsed.to as Hex, nonce: parsed.nonce ?? 0, input: (parsed.data ?? '0x') as Hex, calls };
    if (decoded.size > 10_000) decoded.clear();
    decoded.set(hash, d);
  }
  return d;
}

export class SimChain {
  readonly chainId = 31337;
  blocks: Block[];
  finalized = 0;
  readonly pool = new Map<Hex, SimTx>();
  readonly mempool = new Set<Hex>();
  /** Bumped by every change a read could see (the test's drive loop uses it to tell a poll that waits from progress). */
  version = 0;
  private forks = 0;
  /** Where each canonical transaction is: hash → block number. */
  private where = new Map<Hex, number>();

  constructor() {
    this.blocks = [this.block(0, `0x${'00'.repeat(32)}`, [])];
  }

  private block(number: number, parentHash: Hex, txs: Hex[]): Block {
    const hash = keccak256(toHex(`${parentHash}:${number}:${this.forks}:${txs.join(',')}`));
    return { number, hash, parentHash, timestamp: 1_700_000_000 + number * 2, txs };
  }

  get head(): number {
    return this.blocks.length - 1;
  }

  /** Adds signed bytes to the world pool (idempotent); `broadcast` also tells the network (the mempool). */
  async add(raw: Hex, broadcast: boolean): Promise<SimTx> {
    const hash = keccak256(raw);
    let tx = this.pool.get(hash);
    if (!tx) {
      tx = { ...(await decode(raw, hash)), seen: this.pool.size };
      this.pool.set(hash, tx);
    }
    if (broadcast && !this.where.has(hash) && !this.mempool.has(hash)) {
      this.mempool.add(hash);
      this.version++;
    }
    return tx;
  }

  /** The account's transaction count after block `at`. */
  countAt(from: Hex, at: number): number {
    let n = 0;
    for (let b = 1; b <= at && b <= this.head; b++) for (const h of this.blocks[b]!.txs) if (this.pool.get(h)!.from === from) n++;
    return n;
  }

  /** Canonical block number of a transaction, if mined. */
  minedAt(hash: Hex): number | undefined {
    return this.where.get(hash);
  }

  /** Candidates for the sender's nonce `nonce`, in the order first seen (`mempoolOnly`: what an honest miner knows). */
  candidates(from: Hex, nonce: number, mempoolOnly: boolean): SimTx[] {
    return [...this.pool.values()]
      .filter((t) => t.from === from && t.nonce === nonce && !this.where.has(t.hash) && (!mempoolOnly || this.mempool.has(t.hash)))
      .sort((a, b) => a.seen - b.seen);
  }

  /** Mines one block of `from`'s transactions; each pick chooses among the next nonce's candidates (modulo their number). */
  mine(from: Hex, picks: number[], mempoolOnly: boolean): void {
    const number = this.head + 1;
    const txs: Hex[] = [];
    let next = this.countAt(from, this.head);
    for (const pick of picks) {
      const c = this.candidates(from, next, mempoolOnly);
      if (c.length === 0) break;
      const tx = c[pick % c.length]!;
      txs.push(tx.hash);
      this.where.set(tx.hash, number);
      this.mempool.delete(tx.hash);
      next++;
    }
    this.blocks.push(this.block(number, this.blocks[this.head]!.hash, txs));
    this.version++;
  }

  /** Cuts the last `depth` blocks (never below the finalized one); their transactions return to the mempool. */
  reorg(depth: number): void {
    const keep = Math.max(this.finalized, this.head - depth);
    if (keep === this.head) return;
    for (const b of this.blocks.splice(keep + 1)) {
      for (const h of b.txs) {
        this.where.delete(h);
        this.mempool.add(h);
      }
    }
    this.forks++;
    this.version++;
  }

  finalize(k: number): void {
    const to = Math.min(this.head, this.finalized + k);
    if (to !== this.finalized) this.version++;
    this.finalized = to;
  }

  /** A viem client whose every request goes through `request` (the test's drive loop answers it). */
  client(request: (method: string, params: unknown[]) => Promise<unknown>): PublicClient {
    return createPublicClient({
      // A chain as src/chains/client.ts builds one (viem's replacement detection stays on, as in production).
      chain: defineChain({
        id: this.chainId,
        name: 'sim',
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: ['http://sim.invalid'] } },
      }),
      // Polls come at once: the drive loop, not a clock, decides when a poll sees something new.
      pollingInterval: 1,
      transport: custom({ request: ({ method, params }) => request(method, (params ?? []) as unknown[]) }, { retryCount: 0 }),
    }) as PublicClient;
  }

  /** Answers one JSON-RPC request as `node` sees the chain. Throws an RpcError for an error answer. */
  async answer(node: NodeView, method: string, params: unknown[]): Promise<unknown> {
    const viewHead = Math.max(0, this.head - node.lag);
    const finalizedAt = node.finalityLie ? viewHead : Math.min(this.finalized, viewHead);
    const hidden = (t: SimTx) => node.hideNonce !== undefined && t.nonce === node.hideNonce && this.where.has(t.hash);
    const minedInView = (h: Hex) => {
      const at = this.where.get(h);
      return at !== undefined && at <= viewHead;
    };
    const blockAt = (tag: unknown): Block | 'pending' | undefined => {
      if (tag === 'pending') return 'pending';
      if (tag === 'latest' || tag === undefined) return this.blocks[viewHead];
      if (tag === 'finalized' || tag === 'safe') return this.blocks[finalizedAt];
      if (tag === 'earliest') return this.blocks[0];
      if (typeof tag === 'object' && tag !== null) {
        const t = tag as { blockHash?: Hex; blockNumber?: Hex };
        if (t.blockHash) return this.blocks.slice(0, viewHead + 1).find((b) => b.hash === t.blockHash);
        return blockAt(t.blockNumber);
      }
      const n = Number(tag);
      return n <= viewHead ? this.blocks[n] : undefined;
    };
    const blockJson = (b: Block, full: boolean, wrongHash: boolean) => ({
      ...this.blockJson(b, full, wrongHash),
      ...(node.baseFeeGwei === undefined ? {} : { baseFeePerGas: hex(BigInt(node.baseFeeGwei) * GWEI) }),
    });
    switch (method) {
      case 'eth_chainId':
        return hex(this.chainId);
      case 'eth_blockNumber':
        return hex(viewHead);
      case 'eth_getBlockByNumber':
      case 'eth_getBlockByHash': {
        const b =
          method === 'eth_getBlockByHash' ? this.blocks.slice(0, viewHead + 1).find((x) => x.hash === params[0]) : blockAt(params[0]);
        if (b === undefined) return null;
        const full = params[1] === true;
        if (b === 'pending') return blockJson(this.block(viewHead + 1, this.blocks[viewHead]!.hash, []), full, false);
        const forged = node.forgeBlock ? b.txs.find((h) => hidden(this.pool.get(h)!)) : undefined;
        if (forged) {
          const json = blockJson(b, full, false);
          const hiddenTx = this.pool.get(forged)!;
          const signed =
            node.forgeBlock === 'signed'
              ? [...this.pool.values()].find((t) => t.from === hiddenTx.from && t.nonce === hiddenTx.nonce && !this.where.has(t.hash))
              : undefined;
          const fake = signed?.hash ?? keccak256(toHex(`forged:${forged}`));
          const forgedHash = keccak256(toHex(`forged:${b.hash}`));
          return {
            ...json,
            hash: forgedHash,
            transactions: (json.transactions as unknown[]).map((t) =>
              signed && t === forged
                ? signed.hash
                : signed && typeof t === 'object' && (t as { hash: Hex }).hash === forged
                  ? {
                      ...this.txJson(signed, undefined),
                      blockHash: json.hash,
                      blockNumber: json.number,
                      transactionIndex: (t as { transactionIndex: Hex }).transactionIndex,
                    }
                  : t === forged
                    ? fake
                    : typeof t === 'object' && (t as { hash: Hex }).hash === forged
                      ? { ...(t as object), hash: fake, input: '0xdead' }
                      : t,
            ),
          };
        }
        const json = blockJson(b, full, node.wrongGenesis && b.number === 0);
        if (full && node.forgeBody)
          json.transactions = json.transactions.map((t) => {
            const tx = typeof t === 'string' ? undefined : this.pool.get(t.hash);
            if (!tx || typeof t === 'string' || !hidden(tx)) return t;
            const hash = keccak256(toHex(`forged:${tx.hash}`));
            return node.forgeBody === 'renamed'
              ? { ...t, hash }
              : { ...t, hash, to: '0x000000000000000000000000000000000000dead', input: '0x' };
          });
        return json;
      }
      case 'eth_getTransactionCount': {
        const from = String(params[0]).toLowerCase() as Hex;
        const b = blockAt(params[1]);
        if (b === 'pending') {
          let n = this.countAt(from, viewHead);
          // The node's pending count: the mempool's consecutive nonces after the view's count.
          while (
            [...this.mempool].some((h) => this.pool.get(h)!.from === from && this.pool.get(h)!.nonce === n) ||
            this.nonceMinedAfter(from, n, viewHead)
          )
            n++;
          return hex(Math.max(0, n - node.pendingBehind));
        }
        if (b === undefined) throw new RpcError(-32000, 'header not found');
        const tag = params[1];
        const ahead =
          node.finalityLie === 'beyond' && (tag === 'finalized' || tag === 'safe' || (typeof tag === 'object' && b.number === finalizedAt));
        return hex(this.countAt(from, b.number) + (ahead ? 1 : 0));
      }
      case 'eth_sendRawTransaction': {
        const raw = params[0] as Hex;
        const tx = await this.add(raw, false);
        if (node.falseTooLow || hidden(tx)) throw new RpcError(-32000, 'nonce too low');
        if (this.where.has(tx.hash)) throw new RpcError(-32000, 'nonce too low');
        if (tx.nonce < this.countAt(tx.from, viewHead)) throw new RpcError(-32000, 'nonce too low');
        if (this.mempool.has(tx.hash)) throw new RpcError(-32000, 'already known');
        await this.add(raw, true);
        return tx.hash;
      }
      case 'eth_getTransactionByHash': {
        const tx = this.pool.get(params[0] as Hex);
        if (!tx || hidden(tx)) return null;
        if (minedInView(tx.hash)) return this.txJson(tx, this.where.get(tx.hash)!);
        // A lagging node still holds what it has not seen mined in its pool; a node evicts what its view shows can
        // never be mined (its nonce used).
        if ((this.mempool.has(tx.hash) || this.where.has(tx.hash)) && tx.nonce >= this.countAt(tx.from, viewHead))
          return this.txJson(tx, undefined);
        return null;
      }
      case 'eth_getTransactionReceipt': {
        const tx = this.pool.get(params[0] as Hex);
        if (!tx || hidden(tx)) return null;
        if (minedInView(tx.hash)) return this.receiptJson(tx);
        if (node.forgeReceipt) {
          const taker = [...this.pool.values()].find(
            (t) => t.from === tx.from && t.nonce === tx.nonce && t.hash !== tx.hash && minedInView(t.hash),
          );
          if (taker) return { ...this.receiptJson(taker), ...(node.forgeReceipt === 'own' ? { transactionHash: tx.hash } : {}) };
        }
        return null;
      }
      case 'eth_getTransactionBySenderAndNonce':
        throw new RpcError(-32601, 'the method eth_getTransactionBySenderAndNonce does not exist/is not available');
      case 'eth_estimateGas':
        return hex(50_000);
      case 'eth_call':
        return '0x';
      case 'eth_getCode':
        return '0x';
      case 'eth_maxPriorityFeePerGas':
        return hex(GWEI);
      case 'eth_gasPrice':
        return hex(2n * GWEI);
      case 'eth_getBalance':
        return hex(10n ** 20n);
      default:
        throw new RpcError(-32601, `the method ${method} does not exist/is not available`);
    }
  }

  private nonceMinedAfter(from: Hex, n: number, viewHead: number): boolean {
    // A transaction mined above a lagging node's view is still in that node's pool.
    for (const [h, at] of this.where) if (at > viewHead && this.pool.get(h)!.from === from && this.pool.get(h)!.nonce === n) return true;
    return false;
  }

  private blockJson(b: Block, full: boolean, wrongHash: boolean) {
    return {
      number: hex(b.number),
      hash: wrongHash ? keccak256(toHex('another chain')) : b.hash,
      parentHash: b.parentHash,
      timestamp: hex(b.timestamp),
      baseFeePerGas: hex(GWEI),
      gasLimit: hex(30_000_000),
      gasUsed: hex(0),
      miner: `0x${'00'.repeat(20)}`,
      nonce: '0x0000000000000000',
      difficulty: '0x0',
      extraData: '0x',
      logsBloom: `0x${'00'.repeat(256)}`,
      transactions: b.txs.map((h) => (full ? this.txJson(this.pool.get(h)!, b.number) : h)),
      uncles: [],
    };
  }

  private txJson(tx: SimTx, at: number | undefined) {
    const b = at === undefined ? undefined : this.blocks[at]!;
    // The signed fields as the bytes carry them, so that an answer can be checked against its signature.
    const p = parseTransaction(tx.raw);
    return {
      hash: tx.hash,
      nonce: hex(tx.nonce),
      from: tx.from,
      to: tx.to,
      input: tx.input,
      value: hex(p.value ?? 0n),
      gas: hex(p.gas ?? 60_000n),
      maxFeePerGas: hex(p.maxFeePerGas ?? 2n * GWEI),
      maxPriorityFeePerGas: hex(p.maxPriorityFeePerGas ?? GWEI),
      type: '0x2',
      chainId: hex(this.chainId),
      v: hex(p.v ?? BigInt(p.yParity ?? 0)),
      r: p.r ?? '0x1',
      s: p.s ?? '0x1',
      yParity: hex(p.yParity ?? 0),
      accessList: p.accessList ?? [],
      blockHash: b?.hash ?? null,
      blockNumber: b ? hex(b.number) : null,
      transactionIndex: b ? hex(b.txs.indexOf(tx.hash)) : null,
    };
  }

  private receiptJson(tx: SimTx) {
    const at = this.where.get(tx.hash)!;
    const b = this.blocks[at]!;
    return {
      transactionHash: tx.hash,
      transactionIndex: hex(b.txs.indexOf(tx.hash)),
      blockHash: b.hash,
      blockNumber: hex(at),
      from: tx.from,
      to: tx.to,
      cumulativeGasUsed: hex(50_000),
      gasUsed: hex(50_000),
      effectiveGasPrice: hex(2n * GWEI),
      contractAddress: null,
      logs: [],
      logsBloom: `0x${'00'.repeat(256)}`,
      status: '0x1',
      type: '0x2',
    };
  }

  /** The canonical transactions, oldest first (`upTo`: the finalized prefix). */
  canonical(upTo = this.head): SimTx[] {
    return this.blocks.slice(1, upTo + 1).flatMap((b) => b.txs.map((h) => this.pool.get(h)!));
  }
}
