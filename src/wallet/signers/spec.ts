// The one signer grammar, and which source a run signs with. Pure functions: the caller passes the flags, the
// environment and the config file's values; nothing here reads a file, the process environment or the network.
//
//   --signer keystore | aws:<key id, key ARN or alias/NAME> | gcp:projects/…/cryptoKeyVersions/N | rpc:<url> | ledger[:<path>]
//   --from <address>   required for every external source (aws, gcp, rpc, ledger); checked against what the signer holds
//
// Sources that name a key: the signer setting (flag, then LOOPSIGN_SIGNER, then config "signer"), a keystore named for
// this run (--keystore, LOOPSIGN_KEYSTORE) or in the config file ("keystore"), and LOOPSIGN_PRIVATE_KEY. Two of them
// naming different keys is a usage error (exit 2), never a silent priority; a keystore path named at a lower level
// than an external signer (LOOPSIGN_KEYSTORE in the shell profile, then --signer ledger) is only a location, unused.
import { UsageError } from '../../errors.js';
import { isLoopbackHost } from '../../config.js';
import { redactUrl } from '../../output.js';
import type { Address, SignerSource } from './types.js';

export type SettingOrigin = 'flag' | 'env' | 'config' | 'default';

export interface SignerFlags {
  signer?: string | undefined;
  from?: string | undefined;
  keystore?: string | undefined;
}
export interface SignerFileValues {
  signer?: string | undefined;
  from?: string | undefined;
  keystore?: string | undefined;
}

export interface ResolvedSigner {
  source: SignerSource;
  /** The pinned address: required for external sources; for the keystore, checked against its address when given. */
  from?: Address;
  origin: SettingOrigin;
  fromOrigin?: SettingOrigin;
}

export const DEFAULT_LEDGER_PATH = "m/44'/60'/0'/0/0";

const ORIGIN_LEVEL: Record<SettingOrigin, number> = { flag: 3, env: 2, config: 1, default: 0 };

function label(origin: SettingOrigin, flag: string, env: string, key: string): string {
  return origin === 'flag' ? flag : origin === 'env' ? env : `config "${key}"`;
}

/** The spec as it may be shown: an RPC URL as scheme and host only. */
export function shownSpec(raw: string): string {
  const text = raw.trim();
  return text.toLowerCase().startsWith('rpc:') ? `rpc:${redactUrl(text.slice(4))}` : text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

const AWS_KEY =
  /^(?:arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(?:key|alias)\/[A-Za-z0-9/_+=,.@-]+|alias\/[A-Za-z0-9/_-]+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|mrk-[0-9a-f]{32})$/;
const GCP_KEY =
  /^projects\/[a-z][a-z0-9-]{4,28}[a-z0-9]\/locations\/[a-z0-9-]+\/keyRings\/[A-Za-z0-9_-]{1,63}\/cryptoKeys\/[A-Za-z0-9_-]{1,63}\/cryptoKeyVersions\/[1-9][0-9]*$/;
const SIGNER_KINDS = 'keystore, aws:<key id or ARN>, gcp:projects/…/cryptoKeyVersions/N, rpc:<url> or ledger[:<path>]';

/** A BIP-32 path for the Ethereum app, as m/44'/60'/…; `h` is accepted for `'`. */
export function parseLedgerPath(raw: string, where: string): string {
  const text = raw.trim().replace(/h/g, "'");
  const path = text.startsWith('m/') ? text : `m/${text}`;
  const parts = path.slice(2).split('/');
  const ok = parts.length >= 2 && parts.length <= 10 && parts.every((p) => /^\d{1,10}'?$/.test(p) && Number(p.replace("'", '')) < 2 ** 31);
  if (!ok || !path.startsWith("m/44'/60'/")) {
    throw new UsageError('invalid_signer', `${where}: "${raw}" is not an Ethereum derivation path`, {
      hint: `give ledger:m/44'/60'/0'/0/N (Ledger Live uses m/44'/60'/N'/0/0); the default is ${DEFAULT_LEDGER_PATH}`,
    });
  }
  return path;
}

function parseRpcUrl(raw: string, where: string): SignerSource {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError('invalid_signer', `${where}: rpc:${redactUrl(raw)} is not a URL`, {
      hint: 'for example rpc:https://signer.example:9000',
    });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError('invalid_signer', `${where}: rpc:${redactUrl(raw)} must use https (plain http only on a loopback host)`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new UsageError(
      'insecure_signer_url',
      `${where}: rpc:${redactUrl(raw)} is plain http on a remote host: anyone on the path could read and answer signing requests`,
      {
        hint: 'use https, or run the signer on this machine (127.0.0.1)',
      },
    );
  }
  const source = { kind: 'rpc', endpoint: redactUrl(raw) } as { kind: 'rpc'; endpoint: string; url: string };
  // Not enumerable: printing or serialising the source never shows the URL's credentials, path or query.
  Object.defineProperty(source, 'url', { value: raw, enumerable: false });
  return source;
}

/** Parse one --signer value. `where` names the flag, variable or config key in errors. */
export function parseSignerSpec(raw: string, where = '--signer'): SignerSource {
  const text = raw.trim();
  const colon = text.indexOf(':');
  const kind = (colon < 0 ? text : text.slice(0, colon)).toLowerCase();
  const rest = colon < 0 ? undefined : text.slice(colon + 1).trim();
  const empty = (what: string): never => {
    throw new UsageError('invalid_signer', `${where}: "${kind}:" needs ${what}`, { hint: `use one of ${SIGNER_KINDS}` });
  };
  switch (kind) {
    case 'keystore':
      if (rest !== undefined) {
        throw new UsageError('invalid_signer', `${where}: "keystore" takes no argument; name the file with --keystore PATH`);
      }
      return { kind: 'keystore' };
    case 'aws':
      if (!rest) return empty('a KMS key id, key ARN or alias/NAME');
      if (!AWS_KEY.test(rest)) {
        throw new UsageError('invalid_signer', `${where}: "${shownSpec(text)}" is not an AWS KMS key id, key ARN or alias`, {
          hint: 'for example aws:1234abcd-12ab-34cd-56ef-1234567890ab, aws:arn:aws:kms:us-east-1:111122223333:key/… or aws:alias/loopsign',
        });
      }
      return { kind: 'aws', keyId: rest };
    case 'gcp':
      if (!rest) return empty('a key version name');
      if (!GCP_KEY.test(rest)) {
        throw new UsageError('invalid_signer', `${where}: "${shownSpec(text)}" is not a Cloud KMS key version name`, {
          hint: 'give the full name: gcp:projects/P/locations/L/keyRings/R/cryptoKeys/K/cryptoKeyVersions/N',
        });
      }
      return { kind: 'gcp', keyVersion: rest };
    case 'rpc':
      if (!rest) return empty('the signer URL');
      return parseRpcUrl(rest, where);
    case 'ledger':
      return { kind: 'ledger', path: rest ? parseLedgerPath(rest, where) : DEFAULT_LEDGER_PATH };
    case '':
      throw new UsageError('invalid_signer', `${where} is empty`, { hint: `use one of ${SIGNER_KINDS}` });
    default:
      throw new UsageError('invalid_signer', `${where}: unknown signer "${shownSpec(kind)}"`, { hint: `use one of ${SIGNER_KINDS}` });
  }
}

export function parseFrom(raw: string, where = '--from'): Address {
  const text = raw.trim();
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) {
    throw new UsageError(
      'invalid_from',
      `${where}: "${text.length > 60 ? `${text.slice(0, 60)}…` : text}" is not a 0x-prefixed 20-byte address`,
      {
        hint: 'give the address the signer holds, for example --from 0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      },
    );
  }
  return text as Address;
}

type Picked = { value: string; origin: SettingOrigin } | undefined;
function pick(flag: string | undefined, env: string | undefined, file: string | undefined): Picked {
  if (flag !== undefined) return { value: flag, origin: 'flag' };
  if (env !== undefined && env !== '') return { value: env, origin: 'env' };
  if (file !== undefined) return { value: file, origin: 'config' };
  return undefined;
}

/**
 * Which source signs, from the flags, the environment (LOOPSIGN_SIGNER, LOOPSIGN_FROM, LOOPSIGN_KEYSTORE,
 * LOOPSIGN_PRIVATE_KEY) and the config file ("signer", "from", "keystore"). Refuses two sources at once.
 */
export function resolveSigner(input: {
  flags: SignerFlags;
  env: Record<string, string | undefined>;
  file: SignerFileValues;
}): ResolvedSigner {
  const { flags, env, file } = input;
  const signer = pick(flags.signer, env.LOOPSIGN_SIGNER, file.signer);
  const fromRaw = pick(flags.from, env.LOOPSIGN_FROM, file.from);
  const keystore = pick(flags.keystore, env.LOOPSIGN_KEYSTORE, file.keystore);
  const rawKey = env.LOOPSIGN_PRIVATE_KEY !== undefined && env.LOOPSIGN_PRIVATE_KEY !== '';

  const signerWhere = signer ? label(signer.origin, '--signer', 'LOOPSIGN_SIGNER', 'signer') : '--signer';
  const keystoreWhere = keystore ? label(keystore.origin, '--keystore', 'LOOPSIGN_KEYSTORE', 'keystore') : '--keystore';
  const fromWhere = fromRaw ? label(fromRaw.origin, '--from', 'LOOPSIGN_FROM', 'from') : '--from';
  let source: SignerSource = signer ? parseSignerSpec(signer.value, signerWhere) : { kind: 'keystore' };
  const from = fromRaw ? parseFrom(fromRaw.value, fromWhere) : undefined;
  const conflict = (a: string, b: string): never => {
    throw new UsageError('signer_conflict', `${a} and ${b} name two different signers; loopsign will not pick one for you`, {
      hint: `keep one of them (unset or remove the other); \`loopsign config show\` lists where each setting comes from`,
    });
  };

  if (signer && source.kind !== 'keystore') {
    const shown = `${signerWhere} ${shownSpec(signer.value)}`;
    if (rawKey) conflict(shown, 'LOOPSIGN_PRIVATE_KEY');
    // A keystore named at the signer's level or above competes with it; one below is only a location.
    if (keystore && ORIGIN_LEVEL[keystore.origin] >= ORIGIN_LEVEL[signer.origin]) conflict(shown, keystoreWhere);
    if (!from) {
      throw new UsageError(
        'from_required',
        `${shown} needs --from ADDRESS: the address the signer holds, checked before anything is signed`,
        {
          hint: 'pass --from 0x…, or set LOOPSIGN_FROM or "from" in the config file',
        },
      );
    }
    return { source, from, origin: signer.origin, fromOrigin: fromRaw!.origin };
  }
  if (rawKey) {
    // LOOPSIGN_PRIVATE_KEY is a source of its own: an explicit keystore (--signer keystore, --keystore,
    // LOOPSIGN_KEYSTORE) next to it is a conflict; the config file's keystore path stays a default location.
    if (signer && signer.origin !== 'config') conflict(`${signerWhere} keystore`, 'LOOPSIGN_PRIVATE_KEY');
    if (keystore && keystore.origin !== 'config') conflict(keystoreWhere, 'LOOPSIGN_PRIVATE_KEY');
    source = { kind: 'env' };
  }
  const origin: SettingOrigin = signer?.origin ?? (rawKey ? 'env' : (keystore?.origin ?? 'default'));
  return from ? { source, from, origin, fromOrigin: fromRaw!.origin } : { source, origin };
}
