// `loopsign sandbox`: anvil + contracts + beacon + service (HTTP and MCP) + keeper on 127.0.0.1, and a manifest
// that loopsign's chain module reads for 31337. Nothing in src/ outside the sandbox imports this folder.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { serve, type ServerType } from '@hono/node-server';
import { ensurePrivateDir, writeFileAtomically } from '../fsutil.js';
import { defaultSandboxDir, loopsignPaths } from '../paths.js';
import { addressOfPrivateKey, decryptKeystore, encryptKeystore, generatePrivateKey } from '../wallet/keystore.js';
import type { SandboxManifest } from '../chains/index.js';
import { startAnvil, freePort, type AnvilProcess } from './anvil.js';
import { SandboxBeacon } from './beacon.js';
import { SandboxChain } from './chain.js';
import { Keeper } from './keeper.js';
import { AskService } from './service/asks.js';
import { HostileAsks } from './service/asks-hostile.js';
import { askTools } from './service/ask-tools.js';
import { Hostile } from './service/hostile.js';
import { OperationStore } from './service/store.js';
import { buildApp, Faults, RateLimiter, SPEC_RATE_LIMITS } from './service/http.js';
import { McpTools } from './service/mcp.js';
import { SandboxEvidence } from './service/evidence.js';
import { RatingService } from './service/rating.js';
import { ImageService } from './service/images.js';
import { GenerationService } from './service/generation.js';
import { ReviewWorkspace } from './service/review-workspace.js';
import { newApiKey } from './service/review-fixtures.js';
import { ReviewRoutes } from './service/review-routes.js';
import { beforeHttp } from '../wasm-tier.js';
import { claimStateDir } from './state-lock.js';
import { deployDelegationFramework } from './delegation.js';

export interface SandboxOptions {
  port?: number;
  stateDir?: string;
  autoAdvance?: boolean;
  atomicPlans?: boolean;
  raters?: boolean;
  /** Mine a block every this many seconds (as a live chain does) once deployed and funded; default: at once per transaction. */
  blockTime?: number;
  log?: (message: string) => void;
}

export interface RunningSandbox {
  manifest: SandboxManifest;
  manifestPath: string;
  stateDir: string;
  devWallet: { address: string; keystore: string; passwordFile: string };
  pids: { anvil: number; sandbox: number };
  stop(): Promise<void>;
}

const DEV_USDC = 100_000_000_000n; // 100,000 USDC
const DEV_LREP = 10_000_000_000n; // 10,000 LREP

async function devWallet(stateDir: string): Promise<{ address: `0x${string}`; keystore: string; passwordFile: string }> {
  const keystore = path.join(stateDir, 'dev-wallet.json');
  const passwordFile = path.join(stateDir, 'dev-wallet.password');
  try {
    const password = (await fs.readFile(passwordFile, 'utf8')).replace(/\n$/, '');
    const { address } = await decryptKeystore(JSON.parse(await fs.readFile(keystore, 'utf8')), password);
    return { address, keystore, passwordFile };
  } catch {
    // First start (or an unusable leftover): a fresh throwaway wallet. scrypt n=2^13 (r=8, p=1: what Foundry's cast
    // writes, the lightest setting loopsign unlocks without --allow-weak-kdf); this key only ever holds sandbox funds,
    // and every command that signs with it derives its key again: about 16 ms of CPU at 2^13, 33 at 2^14.
    const key = generatePrivateKey();
    const password = randomBytes(18).toString('base64url');
    await writeFileAtomically(passwordFile, password + '\n');
    await writeFileAtomically(keystore, JSON.stringify(await encryptKeystore(key, password, { n: 8192 }), null, 2) + '\n');
    return { address: addressOfPrivateKey(key), keystore, passwordFile };
  }
}

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  beforeHttp();
  const log = options.log ?? (() => undefined);
  // The sandbox is its own program (the service's local stand-in), not the core: its default folder is the process's.
  const stateDir = path.resolve(options.stateDir ?? defaultSandboxDir(loopsignPaths(process.env)));
  await ensurePrivateDir(stateDir);
  // Before anything in the folder is written: another sandbox's credentials and manifest stay untouched.
  const releaseStateDir = await claimStateDir(stateDir);
  const port = options.port ?? (await freePort());
  const baseUrl = `http://127.0.0.1:${port}`;

  let anvil: AnvilProcess | undefined;
  let server: ServerType | undefined;
  let keeper: Keeper | undefined;
  try {
    anvil = await startAnvil();
    const chain = new SandboxChain(anvil.rpcUrl);
    const beacon = new SandboxBeacon(chain.now() - 60, () => chain.now());
    const addresses = await chain.deployAll(beacon.network);
    const delegation = await deployDelegationFramework(chain);
    const dev = await devWallet(stateDir);
    await chain.fund(dev.address, { eth: '100', usdc: DEV_USDC, lrep: DEV_LREP });
    await chain.setupRaters();
    // Deployed and funded at once; from here on blocks come at the chosen pace (anvil stops mining per transaction).
    if (options.blockTime) await chain.rpc('evm_setIntervalMining', [options.blockTime]);

    // The approved agent integration's workspace API key (rlk_…), the credential of the review commands.
    const apiKey = newApiKey();
    const apiKeyFile = path.join(stateDir, 'workspace-api-key');
    await writeFileAtomically(apiKeyFile, apiKey + '\n');
    const hostile = new Hostile();
    // The signed-in owner's browser session, for the evidence routes (which take no API key).
    const sessionCookie = randomBytes(32).toString('base64url');
    const sessionCookieFile = path.join(stateDir, 'session-cookie');
    await writeFileAtomically(sessionCookieFile, sessionCookie + '\n');
    const operations = new OperationStore();
    const asks = new AskService(
      chain,
      baseUrl,
      { atomicPlans: options.atomicPlans ?? false, receiptTimeoutMs: 180_000, pollAfterMs: 5000 },
      operations,
      new HostileAsks(hostile, chain, operations),
    );
    let workspace: ReviewWorkspace | undefined;
    const evidence = new SandboxEvidence(
      sessionCookie,
      async () => [...(await asks.settledRuns()), ...(workspace?.completedRuns() ?? [])],
      hostile,
    );
    workspace = new ReviewWorkspace(evidence.workspaceId, apiKey, evidence.current, () => chain.now());
    const review = new ReviewRoutes({
      ws: workspace,
      hostile,
      evidence,
      onCall: (name) => evidence.audit(`mcp.${name}`, 'tool', name, {}, 'workspace_agent'),
    });
    keeper = new Keeper(chain, beacon, log);
    const kp = keeper;
    asks.onX402Request = (wallet, validBefore) => kp.holdFor(wallet, validBefore);
    const rating = new RatingService(chain, beacon, keeper, baseUrl, hostile);
    const images = new ImageService(baseUrl, hostile, () => chain.now());
    const generation = new GenerationService(workspace, () => chain.now());
    asks.imagesError = (urls, wallet) => images.askImagesError(urls, wallet);
    const mcp = new McpTools();
    mcp.register(...askTools(asks), ...rating.tools(), ...images.tools());
    mcp.onCall = (name) => evidence.audit(`mcp.${name}`, 'tool', name);
    keeper.autoAdvance = options.autoAdvance ?? false;
    const w = workspace;
    keeper.wakeups.push(() => w.nextWake());
    keeper.ratersEnabled = options.raters ?? true;
    const limiter = new RateLimiter({ ...SPEC_RATE_LIMITS });
    const faults = new Faults();
    const k = keeper;
    const applySettings = (b: Record<string, unknown>): void => {
      if (typeof b.atomicPlans === 'boolean') asks.settings.atomicPlans = b.atomicPlans;
      if (typeof b.autoAdvance === 'boolean') k.autoAdvance = b.autoAdvance;
      if (typeof b.raters === 'boolean') k.ratersEnabled = b.raters;
      if (typeof b.reveals === 'boolean') k.revealsEnabled = b.reveals;
      if (typeof b.keeperBackground === 'boolean') k.background = b.keeperBackground;
      if (typeof b.reviewSetupFailures === 'number') generation.reviewSetupFailures = b.reviewSetupFailures;
      // How the next requested reviews end (the reviewers' answers are fixed when a review is assigned).
      if (b.reviewOutcome === 'failed_terminal') w.outcome = 'failed';
      else if (
        b.reviewOutcome === 'approved' ||
        b.reviewOutcome === 'rejected' ||
        b.reviewOutcome === 'inconclusive' ||
        b.reviewOutcome === 'failed'
      )
        w.outcome = b.reviewOutcome;
      if (typeof b.unsignedReviewEvidence === 'boolean') w.unsignedEvidence = b.unsignedReviewEvidence;
      if (typeof b.workspaceMcpLimit === 'number' && b.workspaceMcpLimit > 0) review.limiter.limit = b.workspaceMcpLimit;
      if (typeof b.workspaceMcpWindowSeconds === 'number' && b.workspaceMcpWindowSeconds >= 1 && b.workspaceMcpWindowSeconds <= 60)
        review.limiter.windowSeconds = b.workspaceMcpWindowSeconds;
      if (typeof b.pollAfterMs === 'number' && b.pollAfterMs >= 0) asks.settings.pollAfterMs = b.pollAfterMs;
      if (b.rateLimits && typeof b.rateLimits === 'object') limiter.limits = { ...limiter.limits, ...(b.rateLimits as object) };
    };
    // Every setting the control can change, as it stands: what the settings control answers, and (taken at start-up)
    // what a reset restores.
    const currentSettings = () => ({
      atomicPlans: asks.settings.atomicPlans,
      autoAdvance: k.autoAdvance,
      raters: k.ratersEnabled,
      reveals: k.revealsEnabled,
      keeperBackground: k.background,
      pollAfterMs: asks.settings.pollAfterMs,
      rateLimits: { ...limiter.limits },
      reviewOutcome: w.outcome,
      unsignedReviewEvidence: w.unsignedEvidence,
      workspaceMcpLimit: review.limiter.limit,
      workspaceMcpWindowSeconds: review.limiter.windowSeconds,
      reviewSetupFailures: generation.reviewSetupFailures,
    });
    const startupSettings = currentSettings();
    const app = buildApp(
      asks,
      hostile,
      mcp,
      beacon,
      {
        state: async () => ({
          chainId: 31337,
          now: chain.now(),
          beaconRound: beacon.currentRound(),
          addresses,
          operations: asks.store.all().length,
          runs: (await evidence.allRuns()).map((r) => r.runId),
          gatedReads: rating.gatedReads,
          settings: {
            atomicPlans: asks.settings.atomicPlans,
            autoAdvance: k.autoAdvance,
            raters: k.ratersEnabled,
            rateLimits: limiter.limits,
          },
        }),
        advance: async (seconds) => {
          const now = await k.advance(seconds);
          evidence.audit('sandbox.time_advanced', 'chain', '31337', { seconds });
          return { now, beaconRound: beacon.currentRound(), keeper: await k.tick() };
        },
        keeperTick: async () => ({ keeper: await k.tick() }),
        content: async (b) => {
          // A question from a simulated account (index 11), so the dev wallet can rate it; gated ones get hosted details.
          const submitter = chain.raters[chain.raters.length - 1]!;
          const gated = b.gated === true;
          const details = gated
            ? rating.hostDetails(String(b.details ?? 'Confidential release notes: build 42 fixes the login bug.'))
            : undefined;
          // The registry takes a question once per chain (its key: category, media, details, URL, title, tags): each
          // call's question gets a key of its own, the public one by its context URL, the gated one by its title.
          const unique = `${Date.now()}-${randomBytes(4).toString('hex')}`;
          const body = {
            chainId: 31337,
            clientRequestId: `sandbox-content-${unique}`,
            maxPaymentAmount: '1000000',
            paymentMode: 'wallet_calls',
            bounty: { amount: '1000000', asset: 'USDC', requiredVoters: '3' },
            roundConfig: { questionDurationSeconds: String(b.durationSeconds ?? 1200), minVoters: '3', maxVoters: '100' },
            question: gated
              ? {
                  title: `${String(b.title ?? 'A gated question')} (${unique})`,
                  categoryId: '1',
                  tags: ['sandbox'],
                  detailsUrl: details!.url,
                  detailsHash: details!.sha256,
                  confidentiality: { visibility: 'gated' },
                }
              : {
                  title: String(b.title ?? 'A public question'),
                  contextUrl: `https://example.com/sandbox-content/${unique}`,
                  categoryId: '1',
                  tags: ['sandbox'],
                },
            walletAddress: submitter.address,
          };
          await chain.fund(submitter.address, { usdc: 1_000_000n, eth: '10' });
          const contentId = await asks.submitDirectly(body, submitter);
          if (gated) rating.markGated(contentId, details!.url);
          return { contentId, gated, details: details ? { url: details.url, sha256: details.sha256 } : null };
        },
        fund: async (b) => {
          await chain.fund(String(b.address) as `0x${string}`, {
            eth: b.eth === undefined ? undefined : String(b.eth),
            usdc: b.usdc === undefined ? undefined : BigInt(String(b.usdc)),
            lrep: b.lrep === undefined ? undefined : BigInt(String(b.lrep)),
          });
          return { funded: b.address };
        },
        settings: (b) => {
          applySettings(b);
          return currentSettings();
        },
        reset: async () => {
          applySettings(startupSettings);
          hostile.clear();
          faults.clear();
          limiter.clear();
          review.limiter.clear();
          await k.forget();
          return { reset: true, settings: currentSettings() };
        },
      },
      limiter,
      faults,
      evidence,
      rating,
      images,
      generation,
      review,
    );

    server = await new Promise<ServerType>((resolve, reject) => {
      const s = serve(
        {
          fetch: (request, env) => {
            k.nudge();
            return app.fetch(request, env);
          },
          hostname: '127.0.0.1',
          port,
        },
        () => resolve(s),
      );
      s.on('error', reject);
    });
    // Idle keep-alive sockets must be closed by clients (undici: after 4 s), never by the server at the moment a
    // client reuses one — that race surfaces as a random "fetch failed".
    const http = server as unknown as { keepAliveTimeout: number; headersTimeout: number };
    http.keepAliveTimeout = 120_000;
    http.headersTimeout = 125_000;
    keeper.start();

    const manifest: SandboxManifest = {
      schema: 'loopsign.sandbox-manifest.v1',
      chainId: 31337,
      baseUrl,
      rpcUrl: anvil.rpcUrl,
      contracts: {
        contentRegistry: addresses.contentRegistry,
        roundVotingEngine: addresses.roundVotingEngine,
        advisoryVoteRecorder: addresses.advisoryVoteRecorder,
        x402QuestionSubmitter: addresses.x402QuestionSubmitter,
        questionRewardPoolEscrow: addresses.questionRewardPoolEscrow,
        feedbackBonusEscrow: addresses.feedbackBonusEscrow,
        protocolConfig: addresses.protocolConfig,
      },
      tokens: { USDC: { address: addresses.usdc }, LREP: { address: addresses.lrep } },
      batchDelegate: addresses.batchExecutor,
      delegation,
      drand: { ...beacon.network, url: `${baseUrl}/drand/${beacon.network.chainHash}` },
      devWallet: { address: dev.address, keystore: dev.keystore, passwordFile: dev.passwordFile },
      workspace: { id: evidence.workspaceId, apiKeyFile, sessionCookieFile },
      pid: process.pid,
    };
    const manifestPath = path.join(stateDir, 'manifest.json');
    await writeFileAtomically(manifestPath, JSON.stringify(manifest, null, 2) + '\n');

    const a = anvil;
    const srv = server;
    let stopped = false;
    return {
      manifest,
      manifestPath,
      stateDir,
      devWallet: dev,
      pids: { anvil: a.pid, sandbox: process.pid },
      stop: async () => {
        if (stopped) return;
        stopped = true;
        // The manifest goes first: it says a sandbox answers here, and from now on none does. Stopped by a signal,
        // the process exits when its hooks' deadline passes (src/shutdown.ts), and a keeper pass still waiting on a
        // node that is going away (anvil's own hook stops it at the same time) must not leave the manifest behind.
        await fs.rm(manifestPath, { force: true });
        await k.stop();
        const closed = new Promise<void>((resolve) => srv.close(() => resolve()));
        (srv as { closeAllConnections?: () => void }).closeAllConnections?.();
        await closed;
        await a.stop();
        await releaseStateDir();
      },
    };
  } catch (error) {
    await keeper?.stop();
    server?.close();
    await anvil?.stop();
    await releaseStateDir();
    throw error;
  }
}
