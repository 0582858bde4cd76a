// Every error code loopsign gives, in one table: its exit code and one sentence an agent can act on (what happened,
// what to do). Agents are told to branch on error.code, so a code means one thing and always comes with one exit
// code. src/errors.ts types each error class by this table (UsageError takes only the codes whose exit here is 2,
// and so on), so throwing a code the table lacks, or through the wrong class, does not compile;
// test/error-codes.test.ts scans src/ for every code given and checks it here too; docs/errors.md is generated from
// this file (npm run docs:errors) and a test fails when it drifts.
//
// Codes the service chooses at run time (its own snake_case words) are not entries: they are the families at the
// end of this file, with serviceCode(), the one way such a word becomes an error code.
//
// Only errors.ts's types come from here: this module is loaded when a service error is built or the docs are
// generated, never by `--help`.
import { ExitCode, type ExitCodeValue } from './errors.js';

export interface CodeEntry<E extends ExitCodeValue = ExitCodeValue> {
  readonly exit: E;
  /** What happened and what to do, in one sentence. */
  readonly says: string;
  /**
   * Set when the service sends the same word itself (then with exit 3, or 6 for a credential): what it means
   * there. serviceCode() passes such a word on unchanged; any other word that is one of these codes is renamed.
   */
  readonly service?: string;
}

function entry<E extends ExitCodeValue>(exit: E, says: string, service?: string): CodeEntry<E> {
  return service === undefined ? { exit, says } : { exit, says, service };
}
const internal = (says: string) => entry(ExitCode.internal, says);
const usage = (says: string, service?: string) => entry(ExitCode.usage, says, service);
const service = (says: string, alsoService?: string) => entry(ExitCode.service, says, alsoService);
const chain = (says: string) => entry(ExitCode.chain, says);
const refused = (says: string) => entry(ExitCode.refused, says);
const credential = (says: string, alsoService?: string) => entry(ExitCode.credential, says, alsoService);
const notReady = (says: string, alsoService?: string) => entry(ExitCode.notReady, says, alsoService);
const evidenceInvalid = (says: string) => entry(ExitCode.evidenceInvalid, says);
const busy = (says: string) => entry(ExitCode.busy, says);

// --- The process ---------------------------------------------------------------------------------------------------
const PROCESS = {
  internal_error: internal('loopsign hit a bug (not your input): rerun the same command with --debug for the stack trace and report it.'),
  interrupted: entry(
    ExitCode.interrupted,
    'stopped by SIGINT (Ctrl-C); everything signed was journaled first, so run the same command again to resume without paying twice.',
  ),
  terminated: entry(
    ExitCode.terminated,
    'stopped by SIGTERM; everything signed was journaled first, so run the same command again to resume without paying twice.',
  ),
};

// --- Flags, arguments and the command line (commander's errors included) -------------------------------------------
const COMMAND_LINE = {
  usage: usage(
    'the command was given a wrong combination of arguments or flags (the message says which); fix them as the message says, nothing was sent.',
  ),
  unknown_command: usage('no such command; the hint suggests the nearest one, and `loopsign --help` lists them all.'),
  unknown_option: usage("the command has no such flag (named without any =value it carried); see the hint or the command's --help."),
  excess_arguments: usage('the command got more positional arguments than it takes; see its --help.'),
  missing_argument: usage("a required positional argument is missing; see the command's --help."),
  option_missing_argument: usage('a flag that takes a value was given without one; add the value.'),
  missing_mandatory_option_value: usage('a required flag is missing; add it (the message names it).'),
  conflicting_option: usage('two flags that exclude each other were both given; keep one.'),
  invalid_argument: usage("a flag's value is not one of those it accepts; the message lists them."),
  secret_in_argv: usage(
    'a password, private key or API key flag was given on the command line, where other users and the shell history can read it; pass it by file or environment variable as the hint says.',
  ),
  invalid_env_name: usage("an --…-env flag takes the NAME of an environment variable, not the secret itself; give the variable's name."),
  invalid_path: usage('a path starts with ~user, which loopsign does not expand; write the full path (or ~/… for your own home).'),
  invalid_timeout: usage('--timeout is not a positive number of seconds; give one.'),
  invalid_now: usage('--now is not a unix time in seconds; give one.'),
  invalid_since: usage('--since is neither a date (2026-11-01) nor a span (24h, 7d, 4w); give one of those.'),
  invalid_operation: usage(
    '--operation is not an operation id (kind-<32 hex>, as loopsign prints it); copy it from the command that made it.',
  ),
  invalid_payment_mode: usage('--payment-mode must be wallet_calls or x402_authorization.'),
  invalid_amount: usage('an amount is not a decimal number, or has more decimal places than its token; give it as the message says.'),
  amount_too_large: usage(
    'an amount is larger than any one payment may be (or than the sandbox hands out at once); check its units (atomic units vs display units), nothing was sent.',
  ),
  invalid_address: usage('an address is not 0x followed by 40 hex characters; give a full address.'),
  bad_address_checksum: usage(
    'a mixed-case address does not match its checksum (a typo?); copy the address again from where it came from.',
  ),
  invalid_wallet: usage("--wallet is not an address (0x followed by 40 hex characters); give the asking wallet's address."),
  invalid_id: usage(
    'an id you gave is not in its form, so it cannot name a route (the message gives the form); copy it as loopsign or the service printed it.',
  ),
};

// --- Configuration: the config file, chains, URLs and service profiles ---------------------------------------------
const CONFIGURATION = {
  config_unreadable: usage(
    'the config file (LOOPSIGN_CONFIG or $XDG_CONFIG_HOME/loopsign/config.json) cannot be read; fix its permissions or path.',
  ),
  config_invalid: usage(
    'the config file is not valid JSON or has an unknown key or a wrong value (the message names it); fix it as docs/cli.md describes.',
  ),
  invalid_config: usage(
    'a setting (flag, environment variable or config key, the message says which) has a value out of its range; fix that setting.',
  ),
  invalid_chain_id: usage('the chain id is not a positive integer; use 8453 (Base), 84532 (Base Sepolia) or 31337 (the sandbox).'),
  unsupported_chain: usage('loopsign does not support this chain id; use 8453 (Base), 84532 (Base Sepolia) or 31337 (the sandbox).'),
  invalid_base_url: usage(
    'the service base URL is not a URL, or carries a user name, password, query or fragment; give the bare origin, e.g. https://www.rateloop.ai.',
  ),
  insecure_base_url: usage(
    'the service base URL is plain http on a remote host; use https (plain http is accepted on a loopback host only).',
  ),
  base_url_required: usage(
    'a command that can spend money needs the service base URL named, never defaulted; pass --base-url (or LOOPSIGN_BASE_URL / baseUrl in the config file).',
  ),
  invalid_rpc_url: usage('the RPC URL is not a URL, or not https (plain http only on a loopback host); fix --rpc-url / LOOPSIGN_RPC_URL.'),
  insecure_rpc_url: usage(
    'the RPC URL is plain http on a remote host; use https, or set "allowInsecureRpc": true in the config file if you mean it.',
  ),
  production_override_refused: usage(
    'the config file replaces Base (8453) contracts, tokens or the batch delegate without "allowProductionOverrides": true; remove the override or add that key if you really mean to trust other contracts.',
  ),
  unknown_profile: usage('the service profile named is not one loopsign knows; use one the hint lists.'),
};

// --- Files the user names ------------------------------------------------------------------------------------------
const FILES = {
  file_not_found: usage('a file you named does not exist or cannot be read; check the path.'),
  not_a_file: usage('a path you named is a directory or another non-file; give a regular file.'),
  file_unreadable: usage('a file you named cannot be read (permissions, or an I/O error the message gives); fix it.'),
  file_too_large: usage(
    'a file you named is larger than loopsign reads for this purpose (the message gives the limit); give the right file.',
  ),
  empty_file: usage('a file you named is empty; give one with content.'),
  invalid_json: usage(
    'a file you named (or inline JSON) is not valid JSON; the message gives the line and column to fix.',
    'the service could not parse the request body loopsign sent it: nothing was done; report it, as no input of yours can cause it.',
  ),
  file_exists: usage('the output file already exists and was not changed; pass --force to replace it, or choose another path.'),
  symlink_refused: usage(
    'the output path is a symbolic link, and loopsign does not write through links; remove the link or choose another path.',
  ),
  same_file: usage('--out names the keystore itself; choose another file for the copy.'),
};

// --- The chain, the RPC and the sandbox's manifest -----------------------------------------------------------------
const CHAIN = {
  rpc_url_required: usage(
    'no RPC URL is configured for this chain; pass --rpc-url (or LOOPSIGN_RPC_URL), or start `loopsign sandbox` for chain 31337.',
  ),
  rpc_unreachable: chain(
    'the RPC did not answer eth_chainId; check --rpc-url (or ETH_RPC_URL, which loopsign falls back to) and the network, then run again.',
  ),
  rpc_chain_mismatch: chain('the RPC is on another chain than the one configured; point --rpc-url at this chain or change --chain-id.'),
  rpc_failed: chain(
    'a request to the RPC failed (an error answer, none in time, one too large, or a broken connection) at a step with no error of its own; what was signed is journaled: check the node and run the same command again.',
  ),
  rpc_bad_answer: chain(
    'the RPC answered with something that cannot be read (a number or hash that is not hex, a field of the wrong kind); nothing was sent on it: check --rpc-url, then run the same command again.',
  ),
  no_trusted_deployment: usage(
    'loopsign has no trusted contracts for a paid round on this chain; configure the deployment you trust in the config file (chains.<id>.contracts, tokens).',
  ),
  untrusted_chain_config: usage(
    'no trusted RoundVotingEngine is configured for this chain, so a vote cannot be checked; configure it in the config file.',
  ),
  sandbox_manifest_unreadable: usage(
    'the sandbox manifest (LOOPSIGN_SANDBOX_MANIFEST) cannot be read; check the path, or restart `loopsign sandbox`.',
  ),
  sandbox_not_running: usage(
    'the chain is 31337 (the local sandbox) but no sandbox manifest is where the configuration points (the message names the path); start `loopsign sandbox`, or point LOOPSIGN_SANDBOX_MANIFEST at its manifest; nothing was sent.',
  ),
  sandbox_manifest_invalid: usage(
    'the sandbox manifest is not valid JSON or not a loopsign sandbox manifest; restart `loopsign sandbox`, which rewrites it.',
  ),
  insufficient_funds: chain(
    'the wallet lacks the ETH for gas or the tokens (USDC, LREP) this needs; fund it and run the same command again, nothing was sent.',
  ),
  fee_cap: chain(
    'the network asks a higher max fee per gas than the cap; wait for fees to fall, or raise maxFeePerGasGwei (LOOPSIGN_MAX_FEE_GWEI), then run again; nothing was signed.',
  ),
};

// --- The service, as loopsign reads its answers --------------------------------------------------------------------
const SERVICE = {
  service_unreachable: service(
    'the service could not be reached (connection refused, reset or timed out); check --base-url and the network, the command is safe to run again.',
  ),
  response_too_large: service(
    'a service answer was larger than its cap and was not read further; the service (or something in between) is misbehaving, and nothing was signed from it.',
  ),
  invalid_response: service(
    'the service answered with a document loopsign cannot use (a field missing or malformed, the message says which); nothing was done with it, try again later or report it.',
  ),
  malformed_response: service(
    'the service returned an identifier that is not in its form (an operationKey, an opportunityId); nothing was done with it, report it.',
  ),
  malformed_service_id: refused(
    'the service returned an id that is not in its published form, so it was not used or printed in a command; nothing was done with it, report it.',
  ),
  mcp_unreachable: service(
    "the service's MCP endpoint could not be reached; check --base-url and the network, the command is safe to run again.",
  ),
  mcp_error: service(
    'an MCP call to the service failed at the protocol level (the message gives its error); try again, or report it if it persists.',
  ),
  mcp_protocol_error: service(
    'the workspace MCP endpoint answered with a JSON-RPC error that answers no request; try again, or report it.',
  ),
  tool_error: service('a service tool failed without a usable error code; the message says what it reported.'),
  tool_not_offered: service(
    'the workspace MCP endpoint does not offer this review tool to this credential (details.tools lists those it does); check the credential and the service version.',
  ),
  rate_limit_exceeded: service(
    'the workspace MCP endpoint is over its rate limit (60 requests a minute per client) and asked to wait longer than loopsign waits; wait the seconds it gives and run the same command again.',
    "the service's rate limit: wait details.retryAfterSeconds and run the same command again, it is safe to repeat.",
  ),
};

// --- Wallet: keystores, passwords and secrets ----------------------------------------------------------------------
const KEYSTORE = {
  keystore_not_found: credential(
    'no keystore at the configured path; create one with `loopsign wallet new`, import one with `loopsign wallet import`, or point --keystore at yours.',
  ),
  keystore_unreadable: credential('the keystore file cannot be read; fix its permissions or the --keystore path.'),
  keystore_invalid: credential(
    'the keystore is not a usable Web3 Secret Storage v3 file (not JSON, a directory, too large, or a field wrong); give the right file.',
  ),
  keystore_address_mismatch: credential(
    "the keystore's address field does not match its key: the file was edited or corrupted; do not use it.",
  ),
  keystore_exists: credential(
    'a keystore already exists at that path and was not changed; back it up, then pass --force to replace it, or choose another --keystore.',
  ),
  wrong_password: credential(
    'wrong password for this keystore (the MAC check failed); check --password-file or the password variable, the keystore was not changed.',
  ),
  weak_kdf: credential(
    "the keystore's key derivation is weaker than any common wallet writes, so its password is cheap to guess; run `loopsign wallet rekey` (or pass --allow-weak-kdf to use it once).",
  ),
  password_required: credential(
    'no password source: give --password-file FILE, set LOOPSIGN_PASSWORD_FILE or the named password variable, or run on a terminal to be prompted.',
  ),
  password_file_unreadable: credential(
    'the password file does not exist or cannot be read; fix the --password-file path or its permissions.',
  ),
  password_empty: credential('the password (or its file) is empty, which is not allowed; give the real password.'),
  password_mismatch: credential('the two passwords typed differ; nothing was written, try again.'),
  password_source_conflict: credential(
    'the new password was given both by file and by variable; give one of --new-password-file or --new-password-env.',
  ),
  rekey_failed: credential('the re-encrypted keystore did not unlock to the same key, so the keystore was not changed; report it.'),
  invalid_private_key: credential('the private key to import is not 32 bytes of hex, or not a valid secp256k1 key; check the key file.'),
  secret_file_unreadable: credential('the file holding a secret (a private key) cannot be read; fix the path or its permissions.'),
  secret_missing: credential("nothing arrived on stdin where a secret was expected; pipe it in, or give the secret's file."),
};

// --- Wallet: external signers (AWS and Google KMS, a JSON-RPC signer, a Ledger) -------------------------------------
const SIGNERS = {
  invalid_signer: usage(
    '--signer (LOOPSIGN_SIGNER, config key signer) is not a signer loopsign knows or is malformed; use keystore, aws:<key>, gcp:<key version>, rpc:<url> or ledger[:<path>].',
  ),
  insecure_signer_url: usage(
    'an rpc: signer is plain http on a remote host, where anyone on the path could answer signing requests; use https or a signer on this machine.',
  ),
  signer_conflict: usage(
    'two settings name different signers (say --signer and --keystore); keep one, `loopsign config show` lists where each comes from.',
  ),
  from_required: usage(
    'an external signer needs --from ADDRESS (LOOPSIGN_FROM, config key from): the address it must hold, checked before anything is signed.',
  ),
  invalid_from: usage('--from is not a 0x-prefixed 20-byte address; give the address the signer holds.'),
  signer_sdk_missing: usage(
    "this signer needs an optional package that is not installed; install it into loopsign's folder as the hint says.",
  ),
  signer_address_mismatch: credential(
    'the signer holds another address than --from; pass the address it holds as --from, or point at the key that holds --from. Nothing was signed.',
  ),
  signer_unreachable: credential(
    'the JSON-RPC signer did not answer (or answered without a result); check that it runs at that URL. Nothing was signed.',
  ),
  signer_declined: refused(
    'the JSON-RPC signer declined the request by its own rules; check its rules and logs, loopsign does not retry. Nothing was signed.',
  ),
  signer_cannot_delegate: refused(
    'this signer cannot sign the EIP-7702 authorization an atomic plan needs (on a Ledger: its EIP-7702 setting is off); run without --atomic, or delegate the wallet once with the keystore or a KMS key.',
  ),
  signature_unreadable: refused('the signer returned a signature that is not DER ECDSA; check the signer. Nothing was signed or sent.'),
  signature_not_from_signer: refused(
    'the signer returned a signature that does not recover to its address over the digest loopsign computed; check the signer before retrying. Nothing was sent.',
  ),
  authorization_any_chain: refused('refused to sign an EIP-7702 authorization with chain id 0 (valid on every chain); nothing was signed.'),
  authorization_wrong_chain: refused(
    'refused to sign an EIP-7702 authorization for another chain than the one configured; nothing was signed.',
  ),
  authorization_foreign_delegate: refused(
    'refused to sign an EIP-7702 authorization to a delegate other than the pinned one; nothing was signed.',
  ),
  authorization_changed: refused(
    'the signer returned an EIP-7702 authorization for another tuple than the one asked for; check the signer. Nothing was sent.',
  ),
  transaction_without_chain: refused(
    'refused to sign a transaction without a chain id (it could be replayed on any chain); nothing was signed.',
  ),
  transaction_wrong_chain: refused('refused to sign a transaction for another chain than the one configured; nothing was signed.'),
  transaction_unreadable: refused('the signer returned bytes that are not a signed transaction; check the signer. Nothing was sent.'),
  transaction_changed: refused(
    'the signer returned a transaction that differs from the one asked for (the field is named); check the signer. Nothing was sent.',
  ),
  transaction_unsigned: refused('the signer returned an unsigned transaction; check the signer. Nothing was sent.'),
  kms_unavailable: credential(
    'the KMS call failed (credentials, region, permissions or a missing key, the message says); fix access as the hint says. Nothing was signed.',
  ),
  kms_key_unsuitable: credential('the KMS key is not a secp256k1 signing key; create one as the hint shows and name it.'),
  kms_corrupted: credential(
    'a Cloud KMS answer arrived corrupted (its CRC32C did not verify); retry, and check the network path if it persists. Nothing was signed.',
  ),
  device_unavailable: credential(
    'loopsign cannot look for a Ledger (USB access failed); check the connection and permissions (udev rules on Linux).',
  ),
  device_locked: credential('the Ledger is locked; unlock it with its PIN and run the command again. Nothing was signed.'),
  device_wrong_app: credential('the Ethereum app is not open on the Ledger (or is outdated); open or update it and run the command again.'),
  device_error: credential(
    'the Ledger failed the request (its status is given) or ended it without an answer; check the device and run again. Nothing was signed.',
  ),
  device_rejected: refused(
    'the request was rejected or cancelled on the Ledger; loopsign does not retry, run the command again to be asked again.',
  ),
  device_timeout: notReady(
    'the Ledger did not answer (or was not found) in time, and the request was cancelled; plug it in, unlock it, close Ledger Live, and run again.',
  ),
  device_stopped: notReady('the command was stopped before the Ledger answered; nothing was signed, run it again.'),
};

// --- Sending transactions (the executor) ---------------------------------------------------------------------------
const TRANSACTIONS = {
  wallet_busy: chain(
    'another loopsign process has been sending from this wallet for minutes; wait for it to finish, then run the same command again (it resumes).',
  ),
  call_would_revert: chain(
    'a plan call would revert on chain (the reason is given); nothing was sent for it, check balances and `loopsign status`, then run again.',
  ),
  approval_replaced: chain(
    'the approval this operation journaled is no longer on chain (another operation on this wallet used or replaced it); ask again with a new clientRequestId (a vote cannot be cast from that journal).',
  ),
  broadcast_failed: chain(
    'the RPC did not accept the signed transaction; it is journaled, so run the same command again (it is resent only if the chain lacks it).',
  ),
  receipt_timeout: chain('no receipt arrived for a sent transaction; it is journaled, so run the same command again to resume.'),
  transaction_reverted: chain(
    'a transaction reverted on chain and nothing after it was sent; check `loopsign status` and the transaction in a block explorer.',
  ),
  reservation_not_cancelled: chain(
    "the registry would not cancel this ask's expired reservation: a submission consumed it (the message names it when the chain shows one) or it was cancelled outside this journal; nothing more was sent, check `loopsign status` before asking again.",
  ),
  stale_nonce: chain(
    'a nonce of this wallet was about to be signed for a second transaction (one nonce is one slot, owned by one payment); nothing was recorded or sent: run the same command again, or use another RPC if it repeats.',
  ),
  nonce_used_elsewhere: chain(
    'another transaction (not one loopsign signed) used this nonce, and that is final: the journaled one can never be mined and paid nothing; run the same command again (its calls are signed anew at a new nonce), and stop other software using the wallet.',
  ),
  nonce_not_final: chain(
    "a transaction's nonce is used by another transaction, and whether this step paid is not final yet; nothing else was signed: run the same command again after details.retryAfterSeconds (it signs the calls anew only if they did not pay).",
  ),
  journal_contradicted: chain(
    "a transaction loopsign saw mined is now unknown to the RPC and its nonce used by another; a mined record is never set aside on one node's word, so nothing was signed: check the transaction in a block explorer and run again with another RPC.",
  ),
  rpc_inconsistent: chain(
    "the RPC's answers contradict each other about which transaction used a nonce of this wallet (one it shows in a block has no receipt, none it shows used it, or the one it shows is not a transaction the wallet signed); nothing was signed: check the wallet's transactions and run again with another RPC.",
  ),
  rpc_lagging: chain(
    "the RPC knows nothing of this wallet's latest journaled transaction (it lags behind the chain, or serves another instance of it); nothing was signed: run again once it has caught up, or with another RPC.",
  ),
  delegation_missing: chain(
    "after an atomic batch the wallet is not delegated to the pinned delegate, so the batch may not have run; check `loopsign status` and the wallet's transactions.",
  ),
  plan_changed: refused(
    'the plan for a stage differs from the one journaled before, so loopsign will not guess what was paid; run `loopsign status` to see what is on chain.',
  ),
  atomic_simulation_reverted: refused(
    'the plan would revert as one atomic batch, and an atomic plan is never split; ask the service for a plan without requiresAtomicExecution, or as the hint says. Nothing was sent.',
  ),
  no_pinned_delegate: refused(
    'no ERC-7821 batch delegate is pinned for this chain, so an atomic plan cannot run; pin one (chains.<id>.batchDelegate) after checking its code. Nothing was sent.',
  ),
  delegate_missing: refused('the pinned batch delegate has no code on this chain; check the pinned address. Nothing was sent.'),
  delegate_unsupported: refused('the pinned delegate does not support ERC-7821 batch mode 0x01; pin one that does. Nothing was sent.'),
  delegated_elsewhere: refused(
    'the wallet is already delegated to another contract than the pinned delegate; revoke that delegation first if you mean to. Nothing was sent.',
  ),
  delegation_not_allowed: refused(
    'this plan must run as one atomic batch, which needs the wallet delegated to the pinned delegate; rerun with --atomic to allow it. Nothing was sent.',
  ),
};

// --- The guards and the spending policy ----------------------------------------------------------------------------
const GUARDS = {
  plan_refused: refused(
    'the plan the service returned failed a guard (details.rule names which); do not retry blindly, nothing was signed or sent: check your configuration, then report it to the service operator.',
  ),
  message_refused: refused(
    'a message the service asked the wallet to sign failed the message guard (details.rule names which); nothing was signed.',
  ),
  unaccounted_call: refused('the plan asks for a call whose payments the spend ledger cannot account for; nothing was signed.'),
  signed_effects_mismatch: refused(
    'a signed transaction could pay other amounts than the calls that were admitted; it was not recorded or sent, report it.',
  ),
  amount_out_of_range: refused(
    'what the service asked to sign carries an amount no payment can be; it was not recorded or signed, report it.',
  ),
  spend_limit: refused(
    "this would pay an ask's bounty or bonus a second time, which loopsign never does; check `loopsign status`, and if an earlier authorization is still valid, run again after it expires.",
  ),
  policy_limit: refused(
    'the spending policy does not allow this (a per-ask, per-rating, window, chain, category or template limit: details.limit says which); only editing the policy file changes it. Nothing was signed.',
  ),
  approval_required: refused(
    "the spend is above the policy's approval threshold and no human can be asked here; run it where a person can answer, or through an MCP host with elicitation. Nothing was signed.",
  ),
  approval_declined: refused(
    'a person declined the spend (the approval prompt or form); nothing was signed. Do not retry it or ask again another way: ask them what they want changed.',
  ),
  invalid_policy: usage('the policy file is not valid JSON or breaks its schema (the field is named); fix it as docs/policy.md describes.'),
  policy_unreadable: usage('the policy file cannot be read; check the path (--policy, LOOPSIGN_POLICY) or its permissions.'),
};

// --- loopsign's state: the database and its journals ---------------------------------------------------------------
const STORE = {
  store_unreadable: usage("loopsign's database cannot be opened; check the state folder's permissions and free space."),
  store_too_new: usage("loopsign's database was written by a newer loopsign; upgrade loopsign."),
  state_on_network_fs: usage(
    "loopsign's state folder is on a network filesystem, where SQLite's locks are unreliable; point XDG_STATE_HOME at a local disk.",
  ),
  store_busy: chain(
    'another loopsign process has held the database for minutes (a hardware signer waiting, a slow RPC); wait for it, then run the same command again. Nothing was signed.',
  ),
  journal_locked: busy(
    'another loopsign process is working on this operation (the same ask, rating or confirmation) and this run sent nothing; wait for it to finish, then run the same command again: it resumes, never pays twice.',
  ),
  journal_corrupt: usage(
    "an operation's journal in the database cannot be read (it was changed outside loopsign); restore the database from a backup. Nothing was signed.",
  ),
  journal_conflict: usage(
    "this clientRequestId's journal holds a different request that already sent transactions; use a new clientRequestId, or restore the original file.",
  ),
  journal_not_set_aside: chain(
    "--set-aside-stale did not set this operation's journal aside: the RPC names another block 0 and has no receipt for its transactions, but it shows the wallet's nonces they used as used, so it may be this chain behind a lagging node; rerun without the flag once the node caught up, or use a new clientRequestId.",
  ),
  journal_other_chain: chain(
    "this operation's journal belongs to another instance of the chain (it was restarted or replaced); use a new clientRequestId, or rerun with the flag the hint names to set the old record aside.",
  ),
};

// --- Asking: ask files, plans, confirmation, status and result -----------------------------------------------------
const ASK = {
  invalid_ask: usage('the ask file (or body) is not an ask loopsign can send: the message names the field; fix it, nothing was sent.'),
  chain_mismatch: usage(
    'the ask names another chain than the configured one; run with the --chain-id the hint gives, or change chainId in the file.',
  ),
  wallet_mismatch: usage(
    'the ask names another wallet than the one signing; remove walletAddress from the file (loopsign fills it in) or use the matching wallet.',
  ),
  wallet_required: usage('name the signing wallet: --wallet ADDRESS, or walletAddress in the ask file.'),
  authorization_required: usage(
    'checking an x402 plan needs the ask body that was sent with it (with its paymentAuthorization); give that body.',
  ),
  invalid_rating_request: usage(
    'the rating request given to check-plan is missing a field or has a malformed one (named); give the prepare arguments as sent.',
  ),
  not_a_plan: usage(
    "the answer given to check-plan is not a plan (an error envelope, or an unknown shape); give the service's plan answer.",
  ),
  unknown_template: usage('the service does not offer this template; see `loopsign templates`.'),
  question_already_submitted: refused(
    'this question (its title, tags, category, context URL, media and details) is already on this chain, and the registry takes each question once; change one of those fields to ask again. Nothing was signed.',
  ),
  chain_check_failed: chain(
    "loopsign could not read the chain for an earlier payment of this stage (the bonus escrow's pools for the question) before paying it; a failed read is no answer, so nothing was signed: check the RPC, then run the same command again.",
  ),
  bonus_not_on_chain: chain(
    "the journal recorded this ask's bonus pool call mined, but the RPC shows no pool from this wallet for the question (a node behind or hiding it, or a reorganised chain); nothing was signed: run the same command again once the RPC shows it.",
  ),
  wallet_nonces_unexplained: refused(
    "the wallet's transaction count on chain is past what loopsign's database recorded or you confirmed, so it may not know a feedback bonus pool this wallet already funded; nothing was signed for the bonus: check the wallet's latest transactions, then run again with --accept-foreign-nonces.",
  ),
  bonus_plan_missing: refused(
    'feedback-bonus transactions are journaled without their plan, so loopsign will not fund again; inspect the operation with `loopsign history --operation ID`.',
  ),
  bonus_in_set_aside_record: refused(
    "a record of this ask set aside as another chain instance's (--set-aside-stale) journaled the transaction that proves the submission and signed a feedback bonus: it may be paid on this chain already, so loopsign will not fund it again; inspect that record with `loopsign history --operation ID`.",
  ),
  unproven_submission: refused(
    "the service reports the ask as submitted, but no receipt of this wallet's own transaction proves it; nothing was paid for a bonus, check the wallet's transactions and `loopsign status`.",
  ),
  confirm_failed: service(
    "the service did not accept the confirmation of the ask's transactions (its status is given); run `loopsign confirm` again, or check `loopsign status`.",
  ),
  bonus_not_funded: service(
    'the service does not report the feedback bonus as funded after its transactions; check `loopsign status` before funding anything again.',
  ),
  wait_timeout: notReady('the ask was not ready within --timeout; waiting again is safe: `loopsign status --operation-key KEY --wait`.'),
  wait_cancelled: notReady(
    'the wait was cancelled; the ask itself is unaffected: pick it up with `loopsign status --operation-key KEY --wait`.',
  ),
  result_not_final: notReady('the result is not final yet; wait with --wait, or run again later.'),
  missing_identifier: usage(
    'name what to look up: --operation-key, or --client-request-id (with the configured chain and wallet), or --content-id.',
  ),
  invalid_operation_key: usage('--operation-key must be 0x followed by 64 hex characters; copy it from the output of `loopsign ask`.'),
  invalid_content_id: usage("--content-id must be a positive integer (the question's id)."),
  invalid_tx_hash: usage('--tx must be 0x followed by 64 hex characters.'),
  no_transactions: usage('the journal holds no transactions for this operation; give them with --tx HASH, in plan order.'),
  unknown_operation: usage(
    "the service (or loopsign's database) knows no such ask or operation: it is not success; check the key, id, wallet and chain.",
  ),
};

// --- Images, hand-off and signing links ----------------------------------------------------------------------------
const IMAGES = {
  image_not_found: usage('the image file does not exist; check the path.'),
  image_not_a_file: usage('the image path is a directory or not a regular file; give an image file.'),
  image_empty: usage('the image file is empty; give a real image.'),
  image_too_large: usage('the image is over 10 MB; shrink it and upload again.'),
  image_unreadable: usage('the image file cannot be read (the error is given); fix its permissions.'),
  image_unsupported: usage('the file is not a JPEG, PNG or WEBP image (checked by content); convert it.'),
  image_rejected: service(
    'the service did not approve the image (a file it could not use, such as a GIF named .png or a corrupt file: its status and reason are given); upload another image.',
  ),
  image_url_malformed: refused(
    'the service returned an image URL not in the form loopsign expects (not a URL, credentials or a query, a wrong path, no #sha256=); it was not used, nothing was paid.',
  ),
  image_url_foreign_origin: refused(
    'the service returned an image URL on another origin than the configured service; it was not used, nothing was paid.',
  ),
  image_url_wrong_attachment: refused(
    'the service returned an image URL (or answer) for another attachment than the one signed for; it was not used, nothing was paid.',
  ),
  too_many_images: usage('a hand-off carries at most 4 generated images; give fewer.'),
  invalid_ttl: usage(
    "--ttl is not a duration (30m, 90s, 1h, or milliseconds) or is outside the link's allowed lifetime; give one within the bounds.",
  ),
  unknown_link: usage('no token for this link in the journal: only links created on this machine can be read; create a new link.'),
  link_expired: service('the hand-off or signing link expired; create a new one.'),
  link_lifetime_refused: refused(
    'the service returned a link that would live longer than asked (or than allowed), or whose lifetime cannot be read; it was not kept or printed, create it again or check the configured service.',
  ),
  link_origin_changed: refused(
    'the link was created on another service origin than the configured one, so its token was not sent; create a new link here.',
  ),
  link_token_in_query: refused(
    'the service put a link token in the query string instead of the fragment; the link was not kept or printed.',
  ),
  foreign_link_origin: refused('the service returned a link on another origin than the configured service; it was not kept or printed.'),
};

// --- Rating (voting on questions) ----------------------------------------------------------------------------------
const RATE = {
  invalid_vote: usage("the vote's flags (direction, prediction, stake) are not a valid vote; the message names the flag."),
  invalid_voter: usage("--voter is not an address; give the voting wallet's address."),
  invalid_frontend: usage("--frontend is not an address; give the frontend's address, or leave it out."),
  invalid_salt: usage('--salt must be 0x followed by 64 hex characters (32 bytes).'),
  invalid_runtime: usage(
    "the --runtime file lacks a field of the rating context's runtime object, or has one of the wrong type (named); give the whole object.",
  ),
  advisory_on_gated: usage('advisory (zero-stake) votes are not allowed on gated questions; stake between 1 and 10 LREP.'),
  voted_in_earlier_round: usage(
    "this wallet's vote on the question is journaled for an earlier round; a vote in the new round is a new vote, rerun as the hint says.",
  ),
  terms_not_accepted: usage(
    "the service's terms for gated questions were not accepted; read them and rerun with --yes (or accept when your host asks). Nothing was signed.",
  ),
  no_commit: usage(
    "no confirmed commit for this question in this wallet's journal: only votes committed from this machine can be revealed here (`loopsign rate status` lists them).",
  ),
  advisory_vote: usage('the vote is advisory: it is recorded, not revealed on the voting engine; there is nothing to reveal.'),
  commit_not_on_chain: chain(
    'the voting engine has no such commit (its transaction may not be mined); run `loopsign rate` again with the same flags to resume it.',
  ),
  round_not_open: chain('the round is still not open after openRound; run the command again shortly.'),
  rating_not_confirmed: service(
    'the service does not report the rating as committed after its transactions (its status is given); check `loopsign rate status`, then run again.',
  ),
  vote_mismatch: refused(
    "this round already has a journaled vote that differs from the flags, and a vote cannot change once it may be sent; rerun with the journaled vote's flags (`loopsign rate status`).",
  ),
  journal_inconsistent: refused(
    "the journaled vote's commit hash does not match its own contents (the journal was edited); restore it from a backup, or vote in a later round. Nothing was signed.",
  ),
  unsupported_drand_chain: refused(
    'the rating context names a drand network other than the pinned one, so the vote could not be revealed as promised; nothing was signed.',
  ),
  gated_url_refused: refused(
    "the service listed gated context that is not a URL, carries credentials, or is not on the service's origin; nothing was read from it and the read session was not sent.",
  ),
  gated_redirect_refused: refused(
    'the gated context answered with a redirect, which loopsign does not follow; nothing was read and no vote was sent.',
  ),
  gated_fetch_failed: service('the gated context could not be read (network error or HTTP status, given); run the command again.'),
  gated_hash_mismatch: refused('the gated context does not match the sha256 it is listed with; no vote was sent.'),
  invalid_read_session: service(
    'the service returned a read session that is not a plain name=value cookie; nothing was sent with it, report it.',
  ),
};

// --- Workspace review: credentials ---------------------------------------------------------------------------------
const REVIEW_CREDENTIALS = {
  api_key_required: credential(
    'the workspace review commands need a workspace API key (or a connected agent token); give --api-key-file FILE or --api-key-env NAME (LOOPSIGN_API_KEY_FILE).',
  ),
  api_key_missing: credential('the environment variable named for the API key is not set or empty; set it, or use --api-key-file.'),
  api_key_unreadable: credential('the API key file cannot be read or is not a file; fix the path or its permissions.'),
  api_key_invalid: credential(
    'the key given does not look like a workspace API key (rlk_…) or an agent token (rlo_at_…); give the right key.',
  ),
  credential_not_accepted: credential(
    'this route takes another kind of credential than the one given (the message names both); give the kind it takes.',
  ),
  insufficient_scope: credential(
    'the credential lacks a scope this call needs (details.scope names it); create a key that includes it, or reconnect the agent granting it.',
    'the same, as the service says it (HTTP 401/403): the message or the WWW-Authenticate challenge names the scope.',
  ),
  agent_pairing_not_approved: credential(
    'the key is a pairing credential the workspace owner has not approved yet, so only the registration tools work; ask the owner to approve the agent, then run again.',
  ),
};

// --- Workspace review: evaluating, requesting, waiting and reading results -----------------------------------------
const REVIEW = {
  invalid_model: usage('--model must be PROVIDER/MODEL, e.g. openai/gpt-5.1.'),
  invalid_execution: usage(
    'the --execution file cannot be read, is not valid JSON or is not an execution record (the message says why); fix it.',
  ),
  invalid_workflow: usage('--workflow must be a workflow key (letters, digits and ._:-).'),
  workflow_not_allowed: usage(
    "the workflow is not in this integration's allow-list (the message lists it); use an allowed workflow.",
    "the service refused the workflow for the same reason; use one of the integration's allowed workflows.",
  ),
  invalid_external_id: usage('--external-id must be 1 to 160 letters, digits and ._:- (one stable id per output).'),
  invalid_risk_tier: usage('--risk-tier must match [a-z][a-z0-9_-]{0,63}, e.g. high.'),
  invalid_source_reference: usage(
    '--source-reference must be an opaque reference (letters, digits and ._:/-, at most 240), never source text.',
  ),
  invalid_confidence: usage('--confidence-bps must be a whole number from 0 to 10000.'),
  invalid_question: usage(
    'the question or a label is empty, too long, has control characters, or the two labels are equal; fix it as the message says.',
  ),
  question_required: usage(
    'the bound request profile asks the agent for the question: give --question, --positive-label and --negative-label.',
  ),
  question_not_allowed: usage('the bound request profile fixes the question; leave out --question.'),
  payload_too_large: usage(
    "the question and both payloads are longer than the service's reviewer prompt allows; shorten the source or the suggestion before evaluating.",
  ),
  opportunity_inputs_changed: usage(
    'this --external-id was already evaluated with other inputs, which the service would refuse; repeat the original files, or give the new output a new --external-id.',
  ),
  unknown_opportunity: usage(
    'this opportunity was not evaluated from this machine, so its exact text is not journaled; give the exact files with --source and --suggestion.',
  ),
  payload_changed: usage(
    'the files differ from the text evaluated for this opportunity, and the service accepts only the committed text; give the original files.',
  ),
  invalid_publication: usage('--publication must be public, synthetic or redacted.'),
  confirmation_required: usage('public review material needs --confirm-no-sensitive-data.'),
  redaction_summary_required: usage('redacted material needs --redaction-summary (10 to 1000 characters).'),
  invalid_limit: usage('--limit must be from 1 to 50.'),
  invalid_cursor: usage('--cursor must be a cursor as printed by an earlier wait or listing; copy it from there.'),
  invalid_configured_id: usage(
    'an owner-configured id (integration, request profile, cohort) has characters other than letters, digits and ._:-; copy it as the owner gave it.',
  ),
  invalid_opportunity_id: usage(
    'the opportunity id is not aop_ followed by 40 hex characters; copy it from `loopsign review evaluate` or `generate`.',
  ),
  invalid_scope_id: usage("the scope id is not evs_ followed by 40 hex characters; copy it from the service's listing."),
  invalid_gate_key: usage(
    '--gate-key is neither a readable pin file nor a base64url SPKI Ed25519 key; pin the review-gate key as the hint shows.',
  ),
  no_gate_key: usage(
    'the trusted-keys file lists no Ed25519 key for human_review_gate; download the current one with `loopsign evidence keys --out FILE`.',
  ),
  review_not_requested: notReady(
    'human review has not been requested for this opportunity, and that is not approval; request it first: `loopsign review request <opportunityId>`.',
    "the service's word for the same state; on the review tools loopsign gives it with exit 7, elsewhere as the service's refusal (exit 3).",
  ),
  result_not_ready: notReady(
    'the review has no result yet, and that is not approval; wait for it: `loopsign review wait <opportunityId>`.',
    "the service's word for the same state; on the review tools loopsign gives it with exit 7, elsewhere as the service's refusal (exit 3).",
  ),
  review_not_finished: notReady(
    'the review is not finished, and that is not approval; wait for it: `loopsign review wait <opportunityId>`.',
  ),
  review_not_approved: notReady(
    'the review finished without approval (details.state and details.reason say how); do not release the output.',
  ),
  review_unverifiable: notReady(
    "the review's approval cannot be verified here (unsigned, no pinned or trusted gate key, or no local output: details.reason); fix that as the hint says, it is not approval until then.",
  ),
  review_wait_timeout: notReady(
    'the review is still pending after the wait, and a timeout is not approval; wait again on the same opportunity (never evaluate a new one), with the cursor the hint gives.',
  ),
  other_opportunity: refused('asked about one opportunity, the service answered about another; nothing was done with the answer.'),
  other_scope: refused('asked for one scope, the service answered about another; nothing was done with the answer.'),
  binding_mismatch: refused(
    "the service's answer binds the review to another policy, project or field than the one asked for; nothing was done with it.",
  ),
  commitment_mismatch: refused('the service froze another output commitment than the hash of this output; nothing was done with it.'),
  evidence_mismatch: refused(
    'the signed evidence names another opportunity, project or field than the review asked about; it is not approval.',
  ),
  output_mismatch: refused(
    'the signed evidence is for another output than the one here (hashes differ); it is not approval for this output.',
  ),
  gate_evidence_invalid: evidenceInvalid("the review's terminal evidence is malformed; it is not approval."),
  gate_signature_invalid: evidenceInvalid("the review's terminal evidence does not verify with the pinned gate key; it is not approval."),
};

// --- Workspace review: artifacts, private reviews, projects and runs -----------------------------------------------
const REVIEW_WORK = {
  not_utf8: usage('an artifact file is not UTF-8 text, and review payloads are text; give a text file.'),
  payload_too_long: usage("an artifact file is over the service's 3,000 characters; shorten it."),
  invalid_media_type: usage('the media type given is not type/subtype (e.g. text/plain).'),
  body_too_large: usage(
    "the private review would send more than the service's 64 KiB per request (base64 included); shorten the artifacts.",
  ),
  request_too_large: usage(
    "the MCP request would be more than the service's 64 KiB; send less in one call.",
    'the service refused the request as over its size cap; send less in one call.',
  ),
  invalid_profile: usage('--profile must be <id>@<version>, e.g. rrp_support@3.'),
  invalid_profile_hash: usage('--profile-hash must be sha256: followed by 64 lower-case hex digits.'),
  invalid_data_classification: usage('--data-classification is not one of the values the message lists; give one of them.'),
  invalid_idempotency_key: usage(
    '--idempotency-key must be 8 to 160 letters, digits or ._:-.',
    "the service's Idempotency-Key check failed (missing, or not matching the request); report it, loopsign sets the header itself.",
  ),
  idempotency_key_reused: usage(
    '--idempotency-key was already used for another private review, which the service would refuse; reuse a key only for the identical request, or leave it out.',
  ),
  invalid_name: usage('--name must be 1 to 160 characters.'),
  invalid_description: usage('--description must be 1 to 2000 characters.'),
  invalid_retention_days: usage('--retention-days must be a whole number of days from 1 to 3650.'),
  invalid_project_id: usage('the project id is not hap_ followed by 32 hex characters; copy it from `loopsign projects list`.'),
  invalid_run_id: usage('the run id is not hau_ followed by 32 or 40 hex characters; copy it as loopsign printed it.'),
  unknown_project: usage(
    'the service knows no such project for this key (or `projects list` does not return it); use one `loopsign projects list` shows.',
  ),
  unknown_run: usage('the service knows no such run for this key; `loopsign projects show <projectId>` lists its runs.'),
  run_unknown: usage('this review has no private delivery, so there is no run to verify; give the run with --run hau_….'),
  project_create_unconfirmed: service(
    'the project request got no clear answer and may have been created; run the same command again, it adopts the project already made instead of creating two.',
  ),
  run_not_completed: notReady(
    'the run is not completed, and only a completed run has an evidence packet; wait: `loopsign runs status RUN --wait`.',
  ),
  run_wait_timeout: notReady('the run is still not finished after the wait; continue waiting: `loopsign runs status RUN --wait`.'),
  other_project: refused('asked for one project, the service answered with another; nothing was done with the answer.'),
  other_run: refused('asked about one run, the service answered about another; nothing was done with the answer.'),
  run_id_mismatch: refused("asked for one run's evidence, the service sent another run's packet; it was not kept."),
};

// --- Generating drafts (loopsign generate) -------------------------------------------------------------------------
const GENERATE = {
  invalid_message: usage('--message must be ROLE:TEXT, e.g. user:Summarise the release notes.'),
  invalid_max_output_tokens: usage('--max-output-tokens must be a positive integer.'),
  invalid_client_request_id: usage('--client-request-id must be 4 to 160 letters, digits, dot, dash, colon or underscore.'),
  unknown_generation: usage(
    'no journaled generation request with this id: only requests made from this machine can be repeated with --retry.',
  ),
  generation_expired: service(
    "the request's 24-hour window has passed and no new generation was made; run `loopsign generate` again with a new --client-request-id.",
    'the same, as the service says it.',
  ),
  review_setup_required: notReady(
    'the draft was generated but its review could not be set up (details.condition), so it is not approved; repair that, then repeat with `loopsign generate --retry ID` (nothing is generated again).',
  ),
};

// --- Evidence: packets, exports and keys ---------------------------------------------------------------------------
const EVIDENCE = {
  invalid_packet_shape: usage(
    'the file is not an evidence packet, audit export or coverage export, or is not usable JSON; give the right file, with --audit or --coverage to say which export.',
  ),
  too_large: usage('the evidence file (or one audit event) is larger than loopsign verifies (the limit is given); give the right file.'),
  missing_trust_anchor: usage(
    'verifying a packet needs a key you trust: --public-key (a pin) or --trusted-keys FILE; the key inside the packet is never trusted.',
  ),
  invalid_key_id: usage('--key-id must be ed25519:<24 hex> or p256:<24 hex>.'),
  invalid_pin: usage(
    '--public-key is neither a readable pin file nor a base64url Ed25519 or P-256 SPKI key; give the .spki.txt file or its one line.',
  ),
  invalid_trusted_keys: usage(
    'the trusted-keys document has a malformed or inconsistent key (named); download it again with `loopsign evidence keys --out FILE`.',
  ),
  unknown_key: usage('no trusted key with this id; the hint lists the known ones.'),
  session_cookie_required: credential(
    'the workspace evidence, audit and coverage routes take a browser session cookie, not an API key; give --session-cookie-file FILE or --session-cookie-env NAME.',
  ),
  session_cookie_missing: credential(
    'the environment variable named for the session cookie is not set or empty; set it, or use --session-cookie-file.',
  ),
  session_cookie_unreadable: credential('the session cookie file cannot be read or is not a file; fix the path or its permissions.'),
  session_cookie_invalid: credential(
    'the session cookie given is not a usable cookie (too long, no session cookie in it, or a malformed value); copy it again from the browser.',
  ),
  evidence_invalid: evidenceInvalid('the evidence did not verify (details.errors names each failed step); do not rely on it.'),
};

// --- loopsign's MCP server -----------------------------------------------------------------------------------------
const MCP_SERVER = {
  invalid_arguments: usage(
    "a tool call's arguments do not match the tool's inputSchema (details.issues names them); fix them and call again, nothing was run.",
    "the service's validation refused the request (the message names the field); fix that input and run again.",
  ),
  unknown_tool: usage("loopsign's MCP server has no tool by that name; call tools/list for those it offers."),
  call_cancelled: notReady(
    'the tool call was cancelled while waiting; nothing being signed or sent was interrupted, call the tool again with the same arguments to pick it up.',
  ),
  file_not_allowed: refused(
    "a file named in a tool call is outside the folders the server may read (or is one of loopsign's own secrets); give a file under a root, or pass the JSON inline.",
  ),
  policy_required: usage(
    '`loopsign mcp` will not serve an agent with an external signer and no spending policy; write a policy file (docs/policy.md) or start it with --policy FILE.',
  ),
  invalid_root: usage('--root is not a folder; give a folder the agent may read files from.'),
  invalid_host: usage('--host must be claude, cursor or vscode.'),
};

// --- The sandbox ---------------------------------------------------------------------------------------------------
const SANDBOX = {
  sandbox_already_running: usage(
    'a sandbox already runs with this --state-dir (the message names its pid); it was left untouched: use it, stop it first, or give another --state-dir.',
  ),
  anvil_not_found: usage(
    'no anvil binary for the sandbox chain; `npm install` on linux-x64, or install Foundry, or set LOOPSIGN_ANVIL to an anvil binary.',
  ),
  anvil_failed: chain('anvil did not start (its last line of output is given); check the port and the binary.'),
  invalid_port: usage('--port is not a TCP port (1-65535).'),
  port_in_use: usage('--port is in use on 127.0.0.1; choose another, or leave --port out to take a free one.'),
  port_not_allowed: usage('--port is below 1024, which needs privileges; choose a port above 1023, or leave --port out.'),
  invalid_block_time: usage('--block-time must be a whole number of seconds from 1 to 3600.'),
  no_sandbox: usage(
    'no sandbox is running where the manifest was looked for; start one with `loopsign sandbox` (and LOOPSIGN_SANDBOX_MANIFEST).',
  ),
  sandbox_unreachable: service('the sandbox named by the manifest did not answer; start it again with `loopsign sandbox`.'),
  sandbox_fund_failed: service("the sandbox refused to fund the address (its HTTP status is given); check the sandbox's output."),
};

// --- On-chain budgets: grants an owner signs and an agent redeems (issue 38) ----------------------------------------
const BUDGET = {
  budget_unsupported_chain: usage(
    'loopsign knows no trusted delegation contracts on this chain; use Base, Base Sepolia or the sandbox (restart an older `loopsign sandbox`, whose manifest lacks them).',
  ),
  budget_code_hashes_unreadable: usage(
    'the file of delegation code hashes recorded at first use cannot be read; restore it from a backup (deleting it trusts whatever code is there now).',
  ),
  budget_contract_missing: chain(
    'a pinned delegation contract (DelegationManager, DeleGator or an enforcer) has no code on this RPC; check --rpc-url: it must be of the configured chain. Nothing was signed.',
  ),
  budget_code_changed: chain(
    'a pinned delegation contract runs other code than the pinned or first-recorded one (both hashes are given); find out why before trusting it. Nothing was signed.',
  ),
  invalid_expiry: usage('--expires is not a duration like 90d, 12h or 30m (at most 5 years); give one.'),
  invalid_budget_caps: usage(
    'the caps of a grant do not fit: each is more than 0, and the per-day cap is not above the per-30-days cap; fix the flags.',
  ),
  budget_self_grant: usage(
    "--to is the owner's own address; a grant goes to the agent's session address (`loopsign wallet address` on the agent's machine).",
  ),
  budget_owner_delegated_elsewhere: refused(
    "the owner's account runs code other than loopsign's batch delegate or the pinned DeleGator (another EIP-7702 delegate, or a contract); loopsign will not replace it. Nothing was signed.",
  ),
  budget_signer_unsupported: usage(
    'the configured signer cannot sign what a grant needs (EIP-712 typed data, and an EIP-7702 authorization the first time); use a keystore, KMS or JSON-RPC signer.',
  ),
  budget_confirmation_required: refused(
    'a grant or a revocation is shown to a person before it is signed, and no terminal can ask here; run it on a terminal, or pass --yes after reading the plan (`--json` prints it). Nothing was signed.',
  ),
  budget_declined: refused('the person declined the grant, revocation or sweep at the prompt; nothing was signed or sent.'),
  budget_no_grant: usage('no grant file was given and none is recorded for this chain; pass --grant grant.json, or grant one first.'),
  budget_grant_invalid: usage(
    'the grant file is not a loopsign grant for this chain (its shape, chain or contracts differ); have the owner run `loopsign budget grant` again.',
  ),
  budget_grant_wrong_chain: refused(
    'the grant file is for another chain than the configured one; configure its chain, or have the owner grant on this one. Nothing was stored.',
  ),
  budget_grant_unknown_contract: refused(
    'the grant names a DelegationManager or DeleGator other than the pinned ones; it cannot be trusted: have the owner run `loopsign budget grant` again. Nothing was stored.',
  ),
  budget_grant_wrong_session: refused(
    "the grant's delegate is not this wallet (another agent's grant, or an open delegate); import it with the wallet it names, or have the owner grant to this one. Nothing was stored.",
  ),
  budget_grant_caveats: refused(
    "the grant's caveats are not exactly a budget grant's (a missing, extra or unknown caveat, another token, a re-delegation, or limits edited after signing); have the owner grant again. Nothing was stored.",
  ),
  budget_grant_wrong_recipient: refused(
    "the grant lets USDC go to another address than this wallet; have the owner grant to this wallet's address. Nothing was stored.",
  ),
  budget_grant_bad_signature: refused(
    "the grant's signature is not its owner's over its caveats (tampered or corrupted); have the owner grant again. Nothing was stored.",
  ),
  budget_owner_not_delegated: refused(
    "the grant's owner does not run the pinned DeleGator, so nothing could be pulled; the owner runs `loopsign budget grant` again (it sets the delegation). Nothing was stored.",
  ),
  budget_expired: refused(
    'the grant is past its expiry; ask the owner for a new one. At import nothing was stored; in an ask nothing was signed or paid.',
  ),
  budget_revoked: refused(
    'the owner revoked the grant (disabled it, or moved its nonce on); ask the owner for a new one. At import nothing was stored; in an ask nothing was signed or paid.',
  ),
  budget_exhausted: refused(
    "the ask would pull more of the owner's money than the grant has left in its day or 30-day period (the chain's enforcers say so); the error's details give resetsAt and retryAfterSeconds. Nothing was signed or paid: run it again after the reset, or ask the owner for more.",
  ),
  budget_pull_refused: refused(
    "refused: a budget pull was not exactly the imported grant's transfer to this wallet through the pinned DelegationManager (or the grant it journaled is gone); nothing was signed. Import the grant again with `loopsign budget import`.",
  ),
  budget_unavailable: chain(
    'the grant cannot be used now: the DelegationManager is paused (by its operators; the owner cannot unpause it), or its state could not be read from the chain; no grant can be redeemed and nothing was pulled, signed or paid. Check the RPC and run again later.',
  ),
  budget_sweep_pending: refused(
    'an unfinished operation of this wallet cannot be read, so loopsign cannot tell what it still needs; nothing was swept: let it finish, then sweep again.',
  ),
  budget_sweep_confirmation_required: refused(
    'a sweep is shown to a person before it is sent, and no terminal can ask here; run it on a terminal, or pass --yes after reading the plan (`--json` prints it in details.plan). Nothing was signed.',
  ),
  budget_read_failed: chain(
    "reading the grant's state from the enforcers failed; check the RPC and run again (nothing is signed by `budget show`).",
  ),
  budget_revoke_target: usage('`budget revoke` needs exactly one of --grant <file|id> (one grant) and --all (every grant of this wallet).'),
  budget_grant_not_found: usage(
    'no grant with that id is recorded in the state folder; pass the grant file, or an id `loopsign budget show` lists.',
  ),
  budget_revoke_unsigned: refused(
    "the grant file's delegation is not one its owner signed (edited or corrupted): disabling it would stop no grant; revoke with the file `budget grant` wrote, or every grant with --all. Nothing was sent.",
  ),
  budget_not_owner: usage("the grant is another wallet's: only its owner can revoke it; run it with the owner's signer."),
};

/** The table, by area (docs/errors.md keeps this order). */
export const ERROR_AREAS = {
  'The process': PROCESS,
  'Flags and arguments': COMMAND_LINE,
  Configuration: CONFIGURATION,
  'Files you name': FILES,
  'The chain and the RPC': CHAIN,
  'The service, as loopsign reads it': SERVICE,
  'Keystores, passwords and secrets': KEYSTORE,
  'External signers': SIGNERS,
  'Sending transactions': TRANSACTIONS,
  'Guards and the spending policy': GUARDS,
  "loopsign's database and journals": STORE,
  'Asking, status and results': ASK,
  'Images and links': IMAGES,
  Rating: RATE,
  'Review credentials': REVIEW_CREDENTIALS,
  'Review: evaluate, request, wait, result': REVIEW,
  'Review: artifacts, private reviews, projects and runs': REVIEW_WORK,
  'Generating drafts': GENERATE,
  Evidence: EVIDENCE,
  "loopsign's MCP server": MCP_SERVER,
  'The sandbox': SANDBOX,
  'On-chain budgets': BUDGET,
} as const;

export const ERROR_CODES = {
  ...PROCESS,
  ...COMMAND_LINE,
  ...CONFIGURATION,
  ...FILES,
  ...CHAIN,
  ...SERVICE,
  ...KEYSTORE,
  ...SIGNERS,
  ...TRANSACTIONS,
  ...GUARDS,
  ...STORE,
  ...ASK,
  ...IMAGES,
  ...RATE,
  ...REVIEW_CREDENTIALS,
  ...REVIEW,
  ...REVIEW_WORK,
  ...GENERATE,
  ...EVIDENCE,
  ...MCP_SERVER,
  ...SANDBOX,
  ...BUDGET,
};

type Table = typeof ERROR_CODES;
/** Every code of the table. */
export type ErrorCode = keyof Table;
/** The codes whose exit code is E. */
export type CodeOfExit<E extends ExitCodeValue> = { [K in ErrorCode]: Table[K]['exit'] extends E ? K : never }[ErrorCode];
export type UsageCode = CodeOfExit<typeof ExitCode.usage>;
export type ServiceCode = CodeOfExit<typeof ExitCode.service>;
export type ChainCode = CodeOfExit<typeof ExitCode.chain>;
export type RefusedCode = CodeOfExit<typeof ExitCode.refused>;
export type CredentialCode = CodeOfExit<typeof ExitCode.credential>;
export type NotReadyCode = CodeOfExit<typeof ExitCode.notReady>;
export type EvidenceInvalidCode = CodeOfExit<typeof ExitCode.evidenceInvalid>;
export type BusyCode = CodeOfExit<typeof ExitCode.busy>;

// --- Codes the service chooses -------------------------------------------------------------------------------------
//
// The service's errors carry its own code word (service-api.md §2, review.md §3): loopsign passes it on as error.code,
// so an agent can act on what the service said (duplicate_ask, max_payment_exceeded, invalid_api_key, …). Those words
// are not entries of the table: the service decides them. They come only through serviceCode() and httpStatusCode(),
// whose result type (ServiceWord) is the only code ServiceError and CredentialError take besides their own table codes.
//
// A word the service sends may also be one of loopsign's own codes. Where it means the same thing, the entry says what
// the service means by it (its `service` sentence) and the word passes unchanged: the exit code tells who said it
// (loopsign's own exit, or 3 / 6 for the service). Any other word that is one of loopsign's codes would read as
// loopsign's (the service's internal_error is not a loopsign bug), so it is passed on as `service.<word>`: a dot, which
// neither loopsign's codes nor the service's words contain, so the renamed word can collide with nothing.

declare const serviceWordBrand: unique symbol;
/** A code the service chose (its word, `service.<word>` or `http_<status>`): made by serviceCode() or httpStatusCode(). */
export type ServiceWord = string & { readonly [serviceWordBrand]: true };

/** How the service's words reach error.code, for docs/errors.md. */
export const SERVICE_FAMILIES = [
  {
    code: "<the service's word>",
    exit: ExitCode.service,
    says: 'the service refused the request with its own code (e.g. duplicate_ask, max_payment_exceeded, unsupported_template, not_found, conflict, service_unavailable); the message says why, details.recoverWith what the service suggests, and details.retryable whether the same call may simply be repeated (never for a 4xx).',
  },
  {
    code: "<the service's word>",
    exit: ExitCode.credential,
    says: 'the service did not accept the credential (HTTP 401 or 403) and said why in its own code (e.g. invalid_api_key, api_key_expired, insufficient_role, invalid_agent_credential, agent_integration_inactive, workspace_api_key_required, authentication_required for a session cookie); the hint says which key or scope to use.',
  },
  {
    code: 'http_<status>',
    exit: ExitCode.service,
    says: 'the service answered with an HTTP error status and no usable code (exit 6 instead when the status is 401 on a credential route); the message gives what it sent, and 5xx answers are worth retrying later.',
  },
  {
    code: 'service.<word>',
    exit: ExitCode.service,
    says: "the service sent a word that is one of loopsign's own codes with another meaning (today: internal_error, the service failing, which is not a loopsign bug); act on it as on any service refusal.",
  },
] as const;

const WORD = /^[a-z][a-z0-9_]{0,63}$/;
const RENAMED = /^service\.[a-z][a-z0-9_]{0,63}$/;

/**
 * The code for a word the service sent (its `code`, or `error`): the word itself, or `service.<word>` when it is one of
 * loopsign's own codes that the table does not give the service's meaning for; undefined when it is no word (free text
 * never becomes a code). Idempotent: a code made here comes back unchanged.
 */
export function serviceCode(value: unknown): ServiceWord | undefined {
  if (typeof value !== 'string') return undefined;
  if (RENAMED.test(value) || /^http_[1-5]\d\d$/.test(value)) return value as ServiceWord;
  if (!WORD.test(value)) return undefined;
  const own = (ERROR_CODES as Record<string, CodeEntry | undefined>)[value];
  return (own === undefined || own.service !== undefined ? value : `service.${value}`) as ServiceWord;
}

/** The code for an HTTP error answer that carried no word. */
export function httpStatusCode(status: number): ServiceWord {
  return `http_${status}` as ServiceWord;
}
