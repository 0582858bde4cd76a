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
}

export interface EvidencePinOptions {
  keyId: string;
  out: string;
  trustedKeys?: string;
}

export interface EvidenceFetchOptions extends TrustOptions {
  workspace: string;
  from?: string;
  to?: string;
  expectedHead?: string;
  out?: string;
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
        'loopsign verify-evidence packet.json --trusted-keys trusted-keys.json',
        'loopsign --json verify-evidence --audit rateloop-audit.json --expected-head sha256:…',
      ]) + '\nExit 0 valid, 8 did not verify, 2 unusable input. The key inside a packet is never trusted.\n',
    )
    .action(lazy(() => import('./evidence.js'), (m) => m.verifyEvidence));
}

export function defineEvidence(program: Command, lazy: Lazy): void {
  const evidence = program.command('evidence').description('trusted keys, pins and evidence downloads');
  evidence
    .command('keys')
    .description('download the public trusted keys (no account needed)')
    .option('--out <file>', 'save the document (for --trusted-keys)')
    .addHelpText('after', examples(['loopsign evidence keys', 'loopsign evidence keys --out trusted-keys.json']))
    .action(lazy(() => import('./evidence.js'), (m) => m.evidenceKeys));
  evidence
    .command('pin')
    .description('write one trusted key as an SPKI pin file')
    .requiredOption('--key-id <id>', 'ed25519:<24 hex>')
    .requiredOption('--out <file>', 'the pin file to write')
    .option('--trusted-keys <file>', 'take the key from a saved document instead of downloading')
    .addHelpText('after', examples(['loopsign evidence pin --key-id ed25519:2d5798c16bafaed29bdbcca0 --out key.spki.txt']))
    .action(lazy(() => import('./evidence.js'), (m) => m.evidencePin));
  trustOptions(
    evidence
      .command('fetch')
      .description('download a run packet, the audit chain or the coverage export (workspace API key in LOOPSIGN_API_KEY) and verify it')
      .argument('<what>', 'run, audit or coverage')
      .argument('[runId]', 'the run, for `run`')
      .requiredOption('--workspace <id>', 'the workspace id')
      .option('--from <iso>', 'coverage window start')
      .option('--to <iso>', 'coverage window end')
      .option('--expected-head <digest>', 'audit: the head digest you expect')
      .option('--out <file>', 'where to write it'),
  )
    .addHelpText('after', examples(['LOOPSIGN_API_KEY=… loopsign evidence fetch run run_123 --workspace ws_1 --trusted-keys trusted-keys.json', 'loopsign evidence fetch audit --workspace ws_1']))
    .action(lazy(() => import('./evidence.js'), (m) => m.evidenceFetch));
}
