// The sandbox's chain side: deploys the contracts to anvil, funds accounts, and owns the chain clock.
// Chain time = wall time + an offset that only the sandbox's time control changes (evm_increaseTime).
import {
  createPublicClient,
  createWalletClient,
  keccak256,
  parseEther,
  toHex,
  type Account,
  type Hex,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { pbkdf2Sync } from 'node:crypto';
import { HDKey, privateKeyToAccount } from 'viem/accounts';
import * as A from './contracts/artifacts.js';
import type { Address } from '../chains/table.js';
import { httpRequest } from '../service/node-http.js';
import { rpcTransport } from '../chains/rpc-transport.js';

/** viem's own defaults for its http transport: a request waits 10 s, and a failed one is sent again up to 3 times. */
const RPC = { timeout: 10_000, retryCount: 3 };

export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

/**
 * The root key of anvil's accounts (BIP-39 seed: PBKDF2-HMAC-SHA512 of the mnemonic, salt "mnemonic", 2048 rounds,
 * as viem's mnemonicToAccount computes it). Derived once here with node's native PBKDF2: mnemonicToAccount runs those
 * 2048 rounds in JavaScript for every account, and the sandbox's eleven took about 0.2 CPU-s of each start.
 */
export function anvilRootKey(): HDKey {
  return HDKey.fromMasterSeed(pbkdf2Sync(ANVIL_MNEMONIC.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512'));
}

export interface SandboxAddresses {
  usdc: Address;
  lrep: Address;
  protocolConfig: Address;
  contentRegistry: Address;
  questionRewardPoolEscrow: Address;
  feedbackBonusEscrow: Address;
  x402QuestionSubmitter: Address;
  roundVotingEngine: Address;
  advisoryVoteRecorder: Address;
  batchExecutor: Address;
}

export const sandboxChainDef = (rpcUrl: string) =>
  ({
    id: 31337,
    name: 'loopsign sandbox',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  }) as const;

export class SandboxChain {
  readonly publicClient: PublicClient;
  readonly deployer: Account;
  readonly raters: Account[];
  private offset = 0;
  private readonly lanes = new Map<string, Promise<unknown>>();
  addresses!: SandboxAddresses;
  /** Where voters' credentials are seeded (ProtocolConfig.raterRegistry); not in the manifest: loopsign never reads it. */
  raterRegistry!: Address;

  constructor(
    readonly rpcUrl: string,
    raterCount = 10,
  ) {
    const chain = sandboxChainDef(rpcUrl);
    this.publicClient = createPublicClient({ chain, transport: rpcTransport(rpcUrl, RPC), pollingInterval: 50 }) as PublicClient;
    // m/44'/60'/0'/0/i, as hdKeyToAccount derives it, from the shared parent derived once: hdKeyToAccount walks the
    // whole path for every account, a public key at each of its five levels (about 0.1 CPU-s of a start).
    const parent = anvilRootKey().derive("m/44'/60'/0'/0");
    const account = (index: number) => privateKeyToAccount(toHex(parent.deriveChild(index).privateKey!));
    this.deployer = account(0);
    this.raters = Array.from({ length: raterCount }, (_, i) => account(i + 2));
  }

  wallet(account: Account): WalletClient {
    return createWalletClient({ account, chain: sandboxChainDef(this.rpcUrl), transport: rpcTransport(this.rpcUrl, RPC) });
  }

  /** The chain's clock, in seconds. */
  now(): number {
    return Math.floor(Date.now() / 1000) + this.offset;
  }

  async rpc(method: string, params: unknown[] = []): Promise<unknown> {
    return this.publicClient.request({ method: method as never, params: params as never });
  }

  /**
   * anvil's newest block number, as one bare JSON-RPC request: the keeper asks it every pass, mostly of a chain that
   * has not moved, and viem's getBlockNumber (its cache, retry and dedupe layers) cost more than the request itself.
   */
  async blockNumber(): Promise<bigint> {
    // A read, safe to send again: a kept-alive connection anvil closed just as it was reused fails the first try.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.blockNumberOnce();
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
  }

  private async blockNumberOnce(): Promise<bigint> {
    const res = await httpRequest(this.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
      headersTimeoutMs: 10_000,
      bodyTimeoutMs: 10_000,
    });
    let text = '';
    for await (const chunk of res.body) text += Buffer.from(chunk).toString('utf8');
    const answer = JSON.parse(text) as { result?: unknown; error?: { message?: string } };
    if (res.status !== 200 || typeof answer.result !== 'string') {
      throw new Error(`anvil did not answer eth_blockNumber: ${answer.error?.message ?? `HTTP ${res.status}`}`);
    }
    return BigInt(answer.result);
  }

  /** Make time pass on the chain (and therefore for the beacon); mines a block at the new time. */
  async advanceTime(seconds: number): Promise<number> {
    const s = Math.max(0, Math.floor(seconds));
    await this.rpc('evm_increaseTime', [s]);
    this.offset += s;
    await this.rpc('evm_mine');
    return this.now();
  }

  /**
   * One transaction at a time per account: the keeper and the test controls both send as the deployer, and two
   * concurrent sends would pick the same nonce.
   */
  send(account: Account, to: Address, abi: readonly unknown[], functionName: string, args: unknown[]): Promise<Hex> {
    return this.inLane(account, () => this.sendNow(account, to, abi, functionName, args));
  }

  /** A call whose calldata is given whole (a plan a hostile service relays), in the account's lane as `send`. */
  sendData(account: Account, to: Address, data: Hex): Promise<Hex> {
    return this.inLane(account, async () => {
      const hash = await this.wallet(account).sendTransaction({ account, chain: null, to, data, value: 0n });
      const receipt = await this.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      if (receipt.status !== 'success') throw new Error(`the relayed call reverted (${hash})`);
      return hash;
    });
  }

  private inLane(account: Account, work: () => Promise<Hex>): Promise<Hex> {
    const lane = account.address.toLowerCase();
    const run = (this.lanes.get(lane) ?? Promise.resolve()).then(work);
    this.lanes.set(
      lane,
      run.catch(() => undefined),
    );
    return run;
  }

  private async sendNow(account: Account, to: Address, abi: readonly unknown[], functionName: string, args: unknown[]): Promise<Hex> {
    const call = { address: to, abi: abi as never, functionName: functionName as never, args: args as never, account };
    // Headroom over the estimate, as loopsign's executor keeps: a user's transaction landing first (a commit that
    // makes this one the threshold vote) can cost this one more gas than estimated.
    const gas = ((await this.publicClient.estimateContractGas(call)) * 12n) / 10n;
    const hash = await this.wallet(account).writeContract({ ...call, gas, chain: undefined });
    const receipt = await this.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== 'success') throw new Error(`${functionName} reverted (${hash})`);
    return hash;
  }

  private async deploy(name: keyof typeof A, args: unknown[] = []): Promise<Address> {
    const artifact = A[name] as { abi: readonly unknown[]; bytecode: Hex };
    const hash = await this.wallet(this.deployer).deployContract({
      abi: artifact.abi as never,
      bytecode: artifact.bytecode,
      args: args as never,
      account: this.deployer,
      chain: undefined,
    });
    const receipt = await this.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (!receipt.contractAddress) throw new Error(`deploying ${name} failed`);
    return receipt.contractAddress as Address;
  }

  async deployAll(drand: { chainHash: string; genesis: number; period: number }): Promise<SandboxAddresses> {
    const usdc = await this.deploy('SandboxUSDC');
    const lrep = await this.deploy('LoopReputation');
    const protocolConfig = await this.deploy('ProtocolConfig');
    const contentRegistry = await this.deploy('ContentRegistry');
    const questionRewardPoolEscrow = await this.deploy('QuestionRewardPoolEscrow');
    const feedbackBonusEscrow = await this.deploy('FeedbackBonusEscrow');
    const x402QuestionSubmitter = await this.deploy('X402QuestionSubmitter');
    const roundVotingEngine = await this.deploy('RoundVotingEngine');
    const advisoryVoteRecorder = await this.deploy('AdvisoryVoteRecorder', [roundVotingEngine, contentRegistry]);
    const batchExecutor = await this.deploy('BatchExecutor');
    this.raterRegistry = await this.deploy('RaterRegistry');
    const d = this.deployer;
    await this.send(d, protocolConfig, A.ProtocolConfig.abi, 'setRaterRegistry', [this.raterRegistry]);
    // As on a live deployment, the drand settings are a config call, made before any round opens (each round
    // snapshots them when it opens).
    await this.send(d, protocolConfig, A.ProtocolConfig.abi, 'setDrandConfig', [
      `0x${drand.chainHash}`,
      BigInt(drand.genesis),
      BigInt(drand.period),
    ]);
    await this.send(d, contentRegistry, A.ContentRegistry.abi, 'configure', [
      usdc,
      lrep,
      questionRewardPoolEscrow,
      roundVotingEngine,
      x402QuestionSubmitter,
    ]);
    await this.send(d, questionRewardPoolEscrow, A.QuestionRewardPoolEscrow.abi, 'configure', [contentRegistry, x402QuestionSubmitter]);
    await this.send(d, feedbackBonusEscrow, A.FeedbackBonusEscrow.abi, 'configure', [
      usdc,
      lrep,
      contentRegistry,
      roundVotingEngine,
      x402QuestionSubmitter,
    ]);
    await this.send(d, x402QuestionSubmitter, A.X402QuestionSubmitter.abi, 'configure', [
      contentRegistry,
      questionRewardPoolEscrow,
      feedbackBonusEscrow,
      usdc,
    ]);
    await this.send(d, roundVotingEngine, A.RoundVotingEngine.abi, 'configure', [
      contentRegistry,
      lrep,
      protocolConfig,
      advisoryVoteRecorder,
    ]);
    this.addresses = {
      usdc,
      lrep,
      protocolConfig,
      contentRegistry,
      questionRewardPoolEscrow,
      feedbackBonusEscrow,
      x402QuestionSubmitter,
      roundVotingEngine,
      advisoryVoteRecorder,
      batchExecutor,
    };
    return this.addresses;
  }

  /** ETH, USDC and LREP for an account, and a human credential (needed to vote on gated content). */
  async fund(address: Address, amounts: { eth?: string; usdc?: bigint; lrep?: bigint }): Promise<void> {
    if (amounts.eth) await this.rpc('anvil_setBalance', [address, `0x${parseEther(amounts.eth).toString(16)}`]);
    if (amounts.usdc) await this.send(this.deployer, this.addresses.usdc, A.SandboxUSDC.abi, 'mint', [address, amounts.usdc]);
    if (amounts.lrep) await this.send(this.deployer, this.addresses.lrep, A.LoopReputation.abi, 'mint', [address, amounts.lrep]);
    // A human credential as live: seeded in the rater registry (anchored to the address, valid for ten years of chain
    // time, which --auto-advance's jumps never reach), never a flag on the engine.
    await this.send(this.deployer, this.raterRegistry, A.RaterRegistry.abi, 'seedHumanCredential', [
      address,
      BigInt(this.now() + 10 * 365 * 24 * 3600),
      keccak256(address),
      keccak256(toHex('loopsign sandbox funding')),
    ]);
  }

  async setupRaters(): Promise<void> {
    for (const rater of this.raters) {
      await this.fund(rater.address, { lrep: 1_000_000_000n });
      await this.send(rater, this.addresses.lrep, A.LoopReputation.abi, 'approve', [this.addresses.roundVotingEngine, 2n ** 255n]);
    }
  }
}
