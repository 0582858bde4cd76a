// loopsign verify-evidence | evidence keys | evidence pin | evidence fetch: definitions (handlers in evidence.ts).
import type { Command } from 'commander';
import { examples, trustOptions, type Lazy, type TrustOptions } from './define.js';

export interface VerifyEvidenceOptions extends TrustOptions {
  audit?: string;
  expectedHead?: string;
  coverage?: string;
}

export interface EvidenceKeysOptions {
  out?: string;
  force?: boolean;
}

export interface EvidencePinOptions {
  keyId: string;
  out: string;
  trustedKeys?: string;
  force?: boolean;
}

export interface EvidenceFetchOptions extends TrustOptions {
  workspace: string;
  from?: string;
  to?: string;
  expectedHead?: string;
  out?: string;
  force?: boolean;
  sessionCookieFile?: string;
  sessionCookieEnv?: string;
}

export function defineVerifyEvidence(program: Command, lazy: Lazy): void {
  trustOptions(
    program
      .command('verify-evidence')
      .description('verify an evidence packet, audit chain or coverage export offline, against a pinned key')
      .argument('[packet]', 'the packet (or any evidence file; its kind is detected), - for stdin'),
  )
    .option('--audit <export>', 'verify an audit chain export')
    .option('--expected-head <digest>', 'with an audit chain: the head digest you expect (sha256:…)')
    .option('--coverage <export>', 'verify a coverage export digest')
    .addHelpText(
      'after',
      examples([
        'loopsign verify-evidence packet.json --public-key key.spki.txt --key-id ed25519:2d5798c16bafaed29bdbcca0',
        'loopsign verify-evidence packet.json --public-key key.spki.txt',
        'loopsign verify-evidence packet.json --trusted-keys trusted-keys.json',
        'loopsign --json verify-evidence --audit rateloop-audit.json --expected-head sha256:…',
      ]) + '\nExit 0 valid, 8 did not verify, 2 unusable input. The key inside a packet is never trusted.\n',
    )
    .action(
      lazy(
        () => import('./evidence.js'),
        (m) => m.verifyEvidence,
      ),
    );
}

export function defineEvidence(program: Command, lazy: Lazy): void {
  const evidence = program.command('evidence').description('trusted keys, pins and evidence downloads');
  evidence
    .command('keys')
    .description('download the public trusted keys (no account needed)')
    .option('--out <file>', 'save the document (for --trusted-keys)')
    .option('--force', 'replace an existing --out file')
    .addHelpText('after', examples(['loopsign evidence keys', 'loopsign evidence keys --out trusted-keys.json']))
    .action(
      lazy(
        () => import('./evidence.js'),
        (m) => m.evidenceKeys,
      ),
    );
  evidence
    .command('pin')
    .description('write one trusted key as an SPKI pin file')
    .requiredOption('--key-id <id>', 'ed25519:<24 hex>')
    .requiredOption('--out <file>', 'the pin file to write')
    .option('--trusted-keys <file>', 'take the key from a saved document instead of downloading')
    .option('--force', 'replace an existing --out file')
    .addHelpText('after', examples(['loopsign evidence pin --key-id ed25519:2d5798c16bafaed29bdbcca0 --out key.spki.txt']))
    .action(
      lazy(
        () => import('./evidence.js'),
        (m) => m.evidencePin,
      ),
    );
  trustOptions(
    evidence
      .command('fetch')
      .description('download a run packet, the audit chain or the coverage export (with a browser session cookie) and verify it')
      .argument('<what>', 'run, audit or coverage')
      .argument('[runId]', 'the run, for `run`')
      .requiredOption('--workspace <id>', 'the workspace id')
      .option('--from <iso>', 'coverage window start')
      .option('--to <iso>', 'coverage window end')
      .option('--expected-head <digest>', 'audit: the head digest you expect')
      .option('--out <file>', 'where to write it (0600; never over an existing file without --force)')
      .option('--force', 'replace an existing --out file')
      .option('--session-cookie-file <file>', 'a file holding the __Host-rateloop-session cookie of a signed-in browser')
      .option('--session-cookie-env <name>', 'the NAME of an environment variable holding that cookie (the cookie never goes in argv)'),
  )
    .addHelpText(
      'after',
      examples([
        'loopsign evidence fetch run run_123 --workspace ws_1 --session-cookie-file ~/.rateloop-session --trusted-keys trusted-keys.json',
        'loopsign evidence fetch audit --workspace ws_1 --session-cookie-env RATELOOP_SESSION',
      ]) +
        '\nThese routes take a browser session cookie, not a workspace API key. A document for another run or workspace than asked is refused (exit 8).\n',
    )
    .action(
      lazy(
        () => import('./evidence.js'),
        (m) => m.evidenceFetch,
      ),
    );
}
