// Images: `loopsign upload-image`, fed the arguments its command line would give.
import { z } from 'zod';
import { tool } from '../call.js';
import { document, filePath } from '../schemas.js';

export const imageTools = [
  tool({
    name: 'loopsign_upload_image',
    title: 'Upload images',
    description: 'Upload local JPG, PNG or WEBP images (checked by content, at most 10 MB, signed by the wallet) and return their URLs for question.imageUrls.',
    input: {
      files: z.array(filePath('an image file')).min(1),
      attachmentId: z.string().optional().describe('reuse an attachment id (one file)'),
    },
    output: document({
      images: z.array(z.looseObject({ file: z.string(), ok: z.boolean(), imageUrl: z.string().optional(), attachmentId: z.string().optional(), sha256: z.string().optional(), reused: z.boolean().optional() })),
    }),
    invoke: async (i, files) => ({
      handler: (await import('../../commands/images.js')).uploadImage,
      options: { attachmentId: i.attachmentId },
      args: [await Promise.all(i.files.map((f) => files.check(f, 'the image')))],
    }),
  }),
];
