// Evidence: `loopsign verify-evidence`, offline, fed the options and argument its command line would give.
import { z } from 'zod';
import { tool } from '../call.js';
import { document, filePath } from '../schemas.js';

const PIN_LINE = /^[A-Za-z0-9_-]{40,}$/;

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
    invoke: async (i, files) => {
      const file = await files.check(i.file, 'the evidence file');
      return {
        handler: (await import('../../commands/evidence.js')).verifyEvidence,
        options: {
          // A pin is its base64url line, or a file holding it: a file is read only where the server may read.
          publicKey: i.publicKey === undefined || PIN_LINE.test(i.publicKey) ? i.publicKey : await files.check(i.publicKey, 'the pin file'),
          keyId: i.keyId,
          trustedKeys: i.trustedKeys === undefined ? undefined : await files.check(i.trustedKeys, 'the trusted-keys file'),
          expectedHead: i.expectedHead,
          audit: i.kind === 'audit' ? file : undefined,
          coverage: i.kind === 'coverage' ? file : undefined,
        },
        args: [i.kind === 'audit' || i.kind === 'coverage' ? undefined : file],
      };
    },
  }),
];
