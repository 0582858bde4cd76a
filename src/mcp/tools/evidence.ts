// Evidence: `loopsign verify-evidence`, offline, fed the options and argument its command line would give.
import { z } from 'zod';
import { tool } from '../call.js';
import { document, filePath } from '../schemas.js';

export const evidenceTools = [
  tool({
    name: 'loopsign_verify_evidence',
    title: 'Verify evidence',
    description: 'Verify an evidence packet, audit chain export or coverage export offline against a pinned key or a trusted-keys file (the key inside a packet is never trusted).',
    input: {
      file: filePath('the evidence file'),
      kind: z.enum(['packet', 'audit', 'coverage']).optional().describe('what the file is (default: detected from its content)'),
      publicKey: z.string().optional().describe('the pinned key: an .spki.txt pin file or its base64url line'),
      keyId: z.string().optional().describe('the key id, ed25519:<24 hex>'),
      trustedKeys: filePath('a saved trusted-keys document (current and retired keys)').optional(),
      expectedHead: z.string().optional().describe('audit chain: the head digest you expect (sha256:…)'),
    },
    output: document({ kind: z.enum(['packet', 'audit', 'coverage']), valid: z.literal(true) }),
    invoke: async (i) => ({
      handler: (await import('../../commands/evidence.js')).verifyEvidence,
      options: {
        publicKey: i.publicKey,
        keyId: i.keyId,
        trustedKeys: i.trustedKeys,
        expectedHead: i.expectedHead,
        audit: i.kind === 'audit' ? i.file : undefined,
        coverage: i.kind === 'coverage' ? i.file : undefined,
      },
      args: [i.kind === 'audit' || i.kind === 'coverage' ? undefined : i.file],
    }),
  }),
];
