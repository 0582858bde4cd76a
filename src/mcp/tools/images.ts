// Images: `loopsign upload-image` — uploadImages (src/images/upload.ts) and the document the command prints.
import * as z from 'zod';
import { tool } from '../call.js';
import { document, filePath, pendingFields, replyWithinSeconds } from '../schemas.js';

export const imageTools = [
  tool({
    name: 'loopsign_upload_image',
    title: 'Upload images',
    description:
      'Upload local JPG, PNG or WEBP images (checked by content, at most 10 MB, signed by the wallet) and return their URLs for question.imageUrls.',
    input: {
      files: z.array(filePath('an image file')).min(1),
      attachmentId: z.string().optional().describe('reuse an attachment id (one file)'),
      replyWithinSeconds,
    },
    output: document({
      // Optional: a pending answer has none yet.
      images: z
        .array(
          z.looseObject({
            file: z.string(),
            ok: z.boolean(),
            imageUrl: z.string().optional(),
            attachmentId: z.string().optional(),
            sha256: z.string().optional(),
            reused: z.boolean().optional(),
          }),
        )
        .optional(),
      ...pendingFields,
    }),
    run: async (ctx, i) => {
      const [{ uploadImages }, { uploadDocument }] = await Promise.all([
        import('../../images/upload.js'),
        import('../../commands/images.js'),
      ]);
      const files = [];
      for (const f of i.files) files.push(await ctx.files.check(f, 'the image'));
      return uploadDocument(ctx, await uploadImages(ctx, files, i.attachmentId));
    },
    // Moderation can take a while: answered within the budget like any wait.
    job: {},
  }),
];
