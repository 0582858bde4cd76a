// loopsign upload-image | handoff | handoff status | sign-link | sign-link status: definitions (handlers in images.ts).
import type { Command } from 'commander';
import { examples, needsFile, type Lazy } from './define.js';

export interface UploadImageOptions {
  attachmentId?: string;
}

export interface HandoffOptions {
  file?: string;
  image?: string[];
  ttl?: string;
}

export interface SignLinkOptions {
  file?: string;
  ttl?: string;
}

export function defineUploadImage(program: Command, lazy: Lazy): void {
  program
    .command('upload-image')
    .description(
      'upload JPG, PNG or WEBP images (checked by content, at most 10 MB; stored as WebP) and print their URLs for question.imageUrls',
    )
    .argument('<files...>', 'image files')
    .option('--attachment-id <id>', 'reuse an attachment id (one file)')
    .addHelpText('after', examples(['loopsign upload-image screenshot.png', 'loopsign --json upload-image a.png b.jpg']))
    .action(
      lazy(
        () => import('./images.js'),
        (m) => m.uploadImage,
      ),
    );
}

export function defineHandoff(program: Command, lazy: Lazy): void {
  const handoffCmd = program
    .command('handoff')
    .description('create a browser handoff link for a human-controlled wallet (the token stays in the URL fragment)')
    .option('--file <ask.json>', 'the ask file')
    .option('--image <file...>', 'generated images to carry (at most 4)')
    .option('--ttl <duration>', 'how long the link lives: 30m (default), 90s, 10m (1 minute … 30 minutes; others are refused)')
    .addHelpText('after', examples(['loopsign handoff --file ask.json --image mockup.png --ttl 30m', 'loopsign handoff status ahf_…']))
    .action(
      lazy(
        () => import('./images.js'),
        (m) => needsFile('handoff', m.handoff),
      ),
    );
  handoffCmd
    .command('status')
    .description(
      'read a handoff created here (token from the journal, sent in the x-rateloop-handoff-token header, only to the origin that issued it)',
    )
    .argument('<id>', 'the handoff id, ahf_…')
    .action(
      lazy(
        () => import('./images.js'),
        (m) => m.handoffStatus,
      ),
    );
}

export function defineSignLink(program: Command, lazy: Lazy): void {
  const signCmd = program
    .command('sign-link')
    .description('create a browser signing intent and print its /agent/sign/… link')
    .option('--file <ask.json>', 'the ask file')
    .option('--ttl <duration>', 'how long the link lives (1 minute … 24 hours, default 30m; others are refused)')
    .addHelpText('after', examples(['loopsign sign-link --file ask.json', 'loopsign sign-link status asi_…']))
    .action(
      lazy(
        () => import('./images.js'),
        (m) => needsFile('sign-link', m.signLink),
      ),
    );
  signCmd
    .command('status')
    .description('read a signing intent created here (its token goes only to the origin that issued it)')
    .argument('<id>', 'the signing intent id, asi_…')
    .action(
      lazy(
        () => import('./images.js'),
        (m) => m.signLinkStatus,
      ),
    );
}
