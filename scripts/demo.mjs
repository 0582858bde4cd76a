// npm run demo: a guided run of loopsign with the built binary, in a throwaway home, against a fresh sandbox.
// It stops the sandbox (and so anvil) at the end, leaving nothing running.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'loopsign.js');
const home = mkdtempSync(path.join(tmpdir(), 'loopsign-demo-'));
const env = {
  ...process.env,
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, 'config'),
  XDG_DATA_HOME: path.join(home, 'data'),
  XDG_STATE_HOME: path.join(home, 'state'),
};
delete env.LOOPSIGN_PASSWORD;
const passwordFile = path.join(home, 'password.txt');
writeFileSync(passwordFile, 'demo password, throwaway\n', { mode: 0o600 });

const steps = [];
function step(title, args, extraEnv = {}, expectCode = 0) {
  console.log(`\n== ${title}\n$ loopsign ${args.join(' ')}`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [bin, ...args], { env: { ...env, ...extraEnv }, stdio: ['ignore', 'inherit', 'inherit'] });
  // Steps that pay (an ask, a vote) report what they sent; reads and refusals send nothing.
  const journal = args[0] === 'ask' || (args[0] === 'rate' && args[1] === '--content-id') ? lastJournalTxs() : 0;
  steps.push({ title, ms: Date.now() - t0, code: r.status, txs: journal });
  if (r.status !== expectCode) throw new Error(`step "${title}" exited ${r.status}, expected ${expectCode}`);
}

/** A step whose JSON answer the demo needs (printed too). */
function stepJson(title, args, extraEnv = {}) {
  console.log(`\n== ${title}\n$ loopsign --json ${args.join(' ')}`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [bin, '--json', ...args], {
    env: { ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  steps.push({ title, ms: Date.now() - t0, code: r.status, txs: 0 });
  if (r.status !== 0) throw new Error(`step "${title}" exited ${r.status}: ${r.stdout}`);
  const doc = JSON.parse(r.stdout);
  // loopsign's checked summary; the service's whole document is under `service`.
  const { service, ...summary } = doc;
  console.log(
    JSON.stringify(summary, null, 2),
    `\n(and the service's document under "service": ${Object.keys(service ?? {}).length} members)`,
  );
  return doc;
}

// Transactions the last ask or vote sent, from loopsign's database (docs/store.md), opened read-only.
function storeDb() {
  return new Database(path.join(home, 'state', 'loopsign', 'loopsign.db'), { readonly: true, fileMustExist: true });
}
function lastJournalTxs() {
  let db;
  try {
    db = storeDb();
    const op = db.prepare('SELECT id FROM operations ORDER BY updated_at DESC LIMIT 1').get();
    return op ? db.prepare("SELECT count(*) AS n FROM transactions WHERE operation_id = ? AND status = 'mined'").get(op.id).n : 0;
  } catch {
    return 0;
  } finally {
    db?.close();
  }
}

/** The question id the ask with this clientRequestId was confirmed with (its journal's confirmation). */
function contentIdOf(clientRequestId) {
  const db = storeDb();
  try {
    for (const { data } of db.prepare("SELECT data FROM operations WHERE kind = 'ask'").all()) {
      const d = JSON.parse(data);
      if (d.clientRequestId === clientRequestId) return d.confirm.contentIds[0];
    }
  } finally {
    db.close();
  }
  throw new Error(`no confirmed ask ${clientRequestId} in the database`);
}

async function control(base, route, body, method = 'POST') {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`sandbox control ${route} failed (${res.status}): ${await res.text()}`);
}

async function startSandbox() {
  const stateDir = path.join(home, 'sandbox');
  const child = spawn(process.execPath, [bin, '--json', 'sandbox', '--state-dir', stateDir, '--auto-advance'], {
    env,
    stdio: ['ignore', 'pipe', process.env.LOOPSIGN_DEMO_DEBUG ? 'inherit' : 'ignore'],
  });
  const info = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]));
    });
    child.on('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
  });
  return { child, info };
}

// An agent host's view: the official MCP SDK client starts `loopsign mcp` on stdio and calls its tools. A spending
// policy written while the server runs applies to its next call: the ask is refused before anything is signed.
async function mcpStep(sbEnv, file) {
  const title = 'an agent host over MCP: `loopsign mcp` on stdio, the same guards and spending policy';
  console.log(`\n== ${title}\n$ loopsign mcp --root <demo home>   (started by the MCP client)`);
  const t0 = Date.now();
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const client = new Client({ name: 'loopsign-demo-host', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      // The server reads files only under the folders it is given (never the keystore, password, config or state).
      args: [bin, 'mcp', '--root', home],
      env: { ...env, ...sbEnv },
      stderr: process.env.LOOPSIGN_DEMO_DEBUG ? 'inherit' : 'ignore',
    }),
  );
  let refused;
  try {
    const { tools } = await client.listTools();
    console.log(`${tools.length} tools: ${tools.map((t) => t.name).join(', ')}`);
    const call = async (name, args = {}) => {
      const r = await client.callTool({ name, arguments: args });
      const doc = r.isError ? JSON.parse(r.content[0].text) : r.structuredContent;
      const shown = JSON.stringify(doc);
      console.log(`-> ${name} ${JSON.stringify(args)}\n   ${shown.length > 240 ? `${shown.slice(0, 240)}…` : shown}`);
      return doc;
    };
    await call('loopsign_wallet_address');
    await call('loopsign_quote', { file });
    const policyFile = path.join(home, 'config', 'loopsign', 'policy.json');
    mkdirSync(path.dirname(policyFile), { recursive: true });
    writeFileSync(policyFile, JSON.stringify({ version: 1, perAsk: { maxUsdc: '1000000' } }));
    console.log(`(a policy now caps each ask at 1 USDC: ${policyFile})`);
    await call('loopsign_policy');
    refused = await call('loopsign_ask', { file, paymentMode: 'wallet_calls' });
    rmSync(policyFile);
  } finally {
    await client.close();
  }
  steps.push({ title, ms: Date.now() - t0, code: refused.error?.exitCode ?? 0, txs: 0 });
  if (refused.error?.code !== 'policy_limit') throw new Error(`step "${title}": the ask was not refused by the policy`);
}

/**
 * Issue 38: the wallet this demo created is an agent's (S) with gas and no USDC; the sandbox's dev wallet, its owner
 * O, grants it 2 USDC a day on chain; S's ask pulls its 1.5 USDC bounty from O through MetaMask's DelegationManager, and
 * a second ask past the day's cap is refused (budget_exhausted) before anything is signed.
 */
async function budgetSteps(sbEnv) {
  const agentEnv = {
    LOOPSIGN_CHAIN_ID: '31337',
    LOOPSIGN_SANDBOX_MANIFEST: sbEnv.LOOPSIGN_SANDBOX_MANIFEST,
    LOOPSIGN_PASSWORD_FILE: passwordFile,
  };
  const agent = JSON.parse(
    spawnSync(process.execPath, [bin, '--json', 'wallet', 'address'], { env: { ...env, ...agentEnv }, encoding: 'utf8' }).stdout,
  ).address;
  step("the sandbox gives the agent's wallet gas, and no USDC", ['sandbox', 'fund', agent, '--usdc', '0', '--lrep', '0'], agentEnv);
  const grant = path.join(home, 'grant.json');
  step(
    "the owner (the dev wallet) grants the agent 2 USDC a day, enforced on chain by MetaMask's delegation contracts",
    ['budget', 'grant', '--to', agent, '--usdc-per-day', '2', '--usdc-per-30-days', '10', '--expires', '1d', '--out', grant, '--yes'],
    sbEnv,
  );
  step('the agent imports the grant (checked against the chain and its own address)', ['budget', 'import', grant], agentEnv);
  const budgetAsk = (id) => {
    const file = path.join(home, `${id}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        chainId: 31337,
        clientRequestId: id,
        maxPaymentAmount: '1500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        question: { title: `Agent question ${id}`, contextUrl: `https://example.com/${id}`, categoryId: '1', tags: ['budget', 'demo'] },
      }),
    );
    return file;
  };
  step(
    "the agent asks: it pulls the 1.5 USDC bounty from the owner's grant, then pays",
    ['ask', '--file', budgetAsk('demo-agent-ask-1'), '--payment-mode', 'wallet_calls'],
    agentEnv,
  );
  step(
    "a second 1.5 USDC ask would cross the 2 USDC day: refused by the chain's numbers (budget_exhausted, exit 5), nothing signed",
    ['ask', '--file', budgetAsk('demo-agent-ask-2'), '--payment-mode', 'wallet_calls'],
    agentEnv,
    5,
  );
  step("the grant as the chain's enforcers count it", ['budget', 'show', '--grant', grant], agentEnv);
}

let sandbox;
try {
  step('create an encrypted wallet', ['wallet', 'new', '--password-file', passwordFile]);
  step('show its address (no unlock needed)', ['wallet', 'address']);
  step('back it up, still encrypted', ['wallet', 'export', '--out', path.join(home, 'backup.json')]);
  console.log('\n== start a local sandbox (anvil, contracts, drand beacon, service, keeper)');
  const t0 = Date.now();
  sandbox = await startSandbox();
  steps.push({ title: 'start the sandbox', ms: Date.now() - t0, code: 0 });
  console.log(`sandbox at ${sandbox.info.baseUrl}, chain ${sandbox.info.chainId}, RPC ${sandbox.info.rpcUrl}`);
  const sbEnv = {
    LOOPSIGN_CHAIN_ID: '31337',
    LOOPSIGN_SANDBOX_MANIFEST: sandbox.info.manifest,
    LOOPSIGN_KEYSTORE: sandbox.info.devWallet.keystore,
    LOOPSIGN_PASSWORD_FILE: sandbox.info.devWallet.passwordFile,
  };
  step("the sandbox's funded dev wallet", ['wallet', 'balance'], sbEnv);
  await control(sandbox.info.baseUrl, '/__sandbox/settings', { pollAfterMs: 1000 });
  const askFile = path.join(home, 'ask.json');
  writeFileSync(
    askFile,
    JSON.stringify(
      {
        chainId: 31337,
        clientRequestId: 'demo-release-go-no-go',
        maxPaymentAmount: '2500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        feedbackBonus: { amount: '1000000', asset: 'USDC' },
        roundConfig: { questionDurationSeconds: '1200', minVoters: '3', maxVoters: '100' },
        question: {
          title: 'Should the agent ship release 42 today?',
          contextUrl: 'https://example.com/release-42',
          categoryId: '1',
          tags: ['release', 'demo'],
        },
      },
      null,
      2,
    ),
  );
  step('quote the ask (nothing is paid)', ['quote', '--file', askFile], sbEnv);
  step(
    'ask humans: check the plan, pay atomically (EIP-7702), fund the bonus, wait for the result',
    ['ask', '--file', askFile, '--payment-mode', 'wallet_calls', '--atomic', '--wait', '--timeout', '120'],
    sbEnv,
  );
  step('read the result again, as JSON for an agent', ['--json', 'result', '--client-request-id', 'demo-release-go-no-go'], sbEnv);
  // An image, uploaded and asked about (a real PNG: the service re-encodes it to WebP).
  const { default: sharp } = await import('sharp');
  const png = await sharp({ create: { width: 1600, height: 900, channels: 3, background: { r: 40, g: 90, b: 160 } } })
    .png()
    .toBuffer();
  const shot = path.join(home, 'screenshot.png');
  writeFileSync(shot, png);
  const imageAsk = path.join(home, 'image-ask.json');
  writeFileSync(
    imageAsk,
    JSON.stringify(
      {
        chainId: 31337,
        clientRequestId: 'demo-image-question',
        maxPaymentAmount: '1000000',
        bounty: { amount: '1000000', asset: 'USDC', requiredVoters: '3' },
        question: {
          title: 'Is this screenshot clear enough for new users?',
          imageFiles: ['screenshot.png'],
          categoryId: '1',
          tags: ['design'],
        },
      },
      null,
      2,
    ),
  );
  step("upload an image (checked by content, signed challenge; the URL carries the stored WebP's hash)", ['upload-image', shot], sbEnv);
  step(
    'ask about it: the local image path is uploaded and replaced by its URL',
    ['ask', '--file', imageAsk, '--payment-mode', 'x402_authorization', '--wait', '--timeout', '120'],
    sbEnv,
  );
  // Rating someone else's question with an encrypted commit, then seeing it revealed. The simulated raters stay
  // out of this round: with --auto-advance their votes would make the keeper jump the clock past the voting window
  // before our vote is in.
  await control(sandbox.info.baseUrl, '/__sandbox/settings', { raters: false });
  const content = await (
    await fetch(`${sandbox.info.baseUrl}/__sandbox/content`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
  ).json();
  step(
    'rate an existing question: the vote is encrypted to a future drand round',
    ['rate', '--content-id', content.contentId, '--up', '--prediction', '70', '--stake', '2'],
    sbEnv,
  );
  await control(sandbox.info.baseUrl, '/__sandbox/time', { advanceSeconds: 1300 });
  await control(sandbox.info.baseUrl, '/__sandbox/keeper/tick', {});
  step('after the round: the keeper decrypted and revealed the vote', ['rate', 'status', '--content-id', content.contentId], sbEnv);
  step(
    'a browser handoff link for a human-held wallet (token only in the fragment)',
    ['handoff', '--file', askFile, '--ttl', '30m'],
    sbEnv,
  );
  // Evidence, verified offline against pinned keys.
  const keysFile = path.join(home, 'trusted-keys.json');
  // The workspace evidence routes take the owner's browser session cookie (never an API key, never argv).
  const cookieArgs = ['--session-cookie-file', sandbox.info.workspace.sessionCookieFile];
  step('download the public trusted keys (no account)', ['evidence', 'keys', '--out', keysFile], sbEnv);
  const runId = `run_${contentIdOf('demo-release-go-no-go')}`;
  step(
    'fetch the evidence packet of the settled round and verify it against the pinned keys',
    [
      'evidence',
      'fetch',
      'run',
      runId,
      '--workspace',
      sandbox.info.workspace.id,
      '--trusted-keys',
      keysFile,
      '--out',
      path.join(home, 'packet.json'),
      ...cookieArgs,
    ],
    sbEnv,
  );
  step(
    'fetch and verify the audit chain of everything the sandbox did',
    ['evidence', 'fetch', 'audit', '--workspace', sandbox.info.workspace.id, '--out', path.join(home, 'audit.json'), ...cookieArgs],
    sbEnv,
  );
  // Invited workspace review: the workspace API key read from a file (never argv); an output recorded by its hashes,
  // its review created, followed to the reviewers' result, which is approval only when completed with signed
  // authorized_positive evidence verified against the pinned key; then the review's run and its evidence packet.
  const keyArgs = ['--api-key-file', sandbox.info.workspace.apiKeyFile];
  const source = path.join(home, 'ticket.txt');
  const reply = path.join(home, 'reply.txt');
  writeFileSync(source, 'Ticket 1001: a customer asks how to export their data.');
  writeFileSync(reply, 'Open Settings > Privacy and choose Export data; the file arrives by email.');
  const evaluated = stepJson(
    'invited review: record the output by its hashes; the bound policy requires a review',
    [
      'review',
      'evaluate',
      '--external-id',
      'demo-ticket-1001',
      '--workflow',
      'support-reply',
      '--risk-tier',
      'high',
      '--source',
      source,
      '--suggestion',
      reply,
      '--model',
      'openai/gpt-5.1',
      ...keyArgs,
    ],
    sbEnv,
  );
  step(
    'create the review: the exact committed text goes to the invited reviewers',
    ['review', 'request', evaluated.opportunityId, ...keyArgs],
    sbEnv,
  );
  step(
    'wait for the reviewers (sandbox time advances): approval verified with the pinned key is exit 0',
    ['review', 'wait', evaluated.opportunityId, '--trusted-keys', keysFile, '--timeout', '120', ...keyArgs],
    sbEnv,
  );
  step(
    "the result, and the review's run: its evidence packet fetched and verified offline",
    ['review', 'result', evaluated.opportunityId, '--trusted-keys', keysFile, '--verify', ...cookieArgs, ...keyArgs],
    sbEnv,
  );
  await control(sandbox.info.baseUrl, '/__sandbox/hostile', { scenario: 'inflated_approval', count: 5 });
  const hostileFile = path.join(home, 'hostile.json');
  writeFileSync(
    hostileFile,
    readFileSync(askFile, 'utf8').replace('demo-release-go-no-go', 'demo-hostile-plan').replace('release 42', 'release 43'),
  );
  step(
    'a compromised service inflates the approval: the guard refuses (exit 5), nothing is signed',
    ['ask', '--file', hostileFile, '--payment-mode', 'wallet_calls'],
    sbEnv,
    5,
  );
  await control(sandbox.info.baseUrl, '/__sandbox/hostile', undefined, 'DELETE');
  const mcpFile = path.join(home, 'mcp-ask.json');
  writeFileSync(
    mcpFile,
    readFileSync(askFile, 'utf8').replace('demo-release-go-no-go', 'demo-mcp-ask').replace('release 42', 'release 44'),
  );
  await mcpStep(sbEnv, mcpFile);
  await budgetSteps(sbEnv);
  step('balances afterwards: the refused plan moved nothing', ['wallet', 'balance'], sbEnv);
  console.log('\nsummary');
  console.log(`  ${'step'.padEnd(96)} ${'time'.padStart(8)}  exit  transactions`);
  for (const s of steps)
    console.log(`  ${s.title.padEnd(96)} ${String(s.ms).padStart(6)} ms  ${String(s.code).padStart(4)}  ${s.txs || ''}`);
} catch (error) {
  console.error(`\ndemo failed: ${error.message}`);
  process.exitCode = 1;
} finally {
  if (sandbox) {
    sandbox.child.kill('SIGTERM');
    await new Promise((r) => sandbox.child.once('exit', r));
  }
  rmSync(home, { recursive: true, force: true });
}
