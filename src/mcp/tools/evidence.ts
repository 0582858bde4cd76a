// Evidence: `loopsign verify-evidence`, offline — verifyEvidenceFile (src/evidence/files.ts) and the document the
// command prints.
import * as z from 'zod';
import type { PacketTrust } from '../../evidence/files.js';
import { tool } from '../call.js';
import { document, filePath } from '../schemas.js';

const PIN_LINE = /^[A-Za-z0-9_-]{40,}$/;

export const evidenceTools = [
  tool({
    name: 'loopsign_verify_evidence',
    title: 'Verify evidence',
    description:
      'Verify an evidence packet, audit chain export or coverage export offline against a pinned key or a trusted-keys file (the key inside a packet is never trusted).',
    input: {
      file: filePath('the evidence file'),
      kind: z.enum(['packet', 'audit', 'coverage']).optional().describe('what the file is (default: detected from its content)'),
      publicKey: z.string().optional().describe('the pinned key: an .spki.txt pin file or its base64url line'),
      keyId: z.string().optional().describe('the key id, ed25519:<24 hex>'),
      trustedKeys: filePath('a saved trusted-keys document (current and retired keys)').optional(),
      expectedHead: z.string().optional().describe('audit chain: the head digest you expect (sha256:…)'),
    },
    output: document({ kind: z.enum(['packet', 'audit', 'coverage']), valid: z.literal(true) }),
    run: async (ctx, i) => {
      const [ev, { evidenceDocument }] = await Promise.all([import('../../evidence/files.js'), import('../../commands/evidence.js')]);
      const file = await ctx.files.check(i.file, 'the evidence file');
      const trust: PacketTrust = {
        // A pin is its base64url line, or a file holding it: a file is read only where the server may read.
        publicKey:
          i.publicKey === undefined || PIN_LINE.test(i.publicKey) ? i.publicKey : await ctx.files.check(i.publicKey, 'the pin file'),
        keyId: i.keyId,
        trustedKeys: i.trustedKeys === undefined ? undefined : await ctx.files.check(i.trustedKeys, 'the trusted-keys file'),
      };
      const outcome = await ev.verifyEvidenceFile(
        file,
        i.kind === 'audit' || i.kind === 'coverage' ? i.kind : undefined,
        trust,
        i.expectedHead,
      );
      return evidenceDocument(ctx, outcome);
    },
  }),
];
