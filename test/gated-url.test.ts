// Where gated context may be read from (issue 11 §3): the configured service's origin exactly, https (plain http only
// when that origin is loopback), no credentials in the URL. Everything else is a refusal (exit 5) before any request.
import { describe, expect, it } from 'vitest';
import { checkGatedUrl } from '../src/rate/gated.js';
import { LoopsignError } from '../src/errors.js';

const codeOf = (f: () => unknown) => {
  try {
    f();
    return 'accepted';
  } catch (error) {
    expect((error as LoopsignError).exitCode).toBe(5);
    return (error as LoopsignError).code;
  }
};

describe('checkGatedUrl', () => {
  it.each([
    ['https://www.rateloop.ai', 'https://www.rateloop.ai/api/attachments/details/det_1?address=0x1', 'accepted'],
    ['https://www.rateloop.ai', 'https://www.rateloop.ai/api/attachments/images/att_1.webp#sha256=0xab', 'accepted'],
    ['https://www.rateloop.ai', 'https://rateloop.ai/api/attachments/details/det_1', 'gated_url_refused'],
    ['https://www.rateloop.ai', 'https://www.rateloop.ai.evil.example/x', 'gated_url_refused'],
    ['https://www.rateloop.ai', 'https://www.rateloop.ai:8443/x', 'gated_url_refused'],
    ['https://www.rateloop.ai', 'http://www.rateloop.ai/x', 'gated_url_refused'],
    ['https://www.rateloop.ai', 'https://user:pw@www.rateloop.ai/x', 'gated_url_refused'],
    ['https://www.rateloop.ai', 'http://169.254.169.254/latest/meta-data/', 'gated_url_refused'],
    ['https://www.rateloop.ai', 'file:///etc/passwd', 'gated_url_refused'],
    ['https://www.rateloop.ai', '/api/attachments/details/det_1', 'gated_url_refused'],
    ['http://127.0.0.1:4000', 'http://127.0.0.1:4000/api/attachments/details/det_1', 'accepted'],
    ['http://127.0.0.1:4000', 'http://localhost:4000/api/attachments/details/det_1', 'gated_url_refused'],
    ['http://127.0.0.1:4000', 'http://127.0.0.1:4001/x', 'gated_url_refused'],
  ])('service %s, URL %s: %s', (base, url, expected) => {
    expect(codeOf(() => checkGatedUrl(url, base, 'details'))).toBe(expected);
  });

  it('drops the fragment (never sent) and keeps the query', () => {
    expect(checkGatedUrl('https://www.rateloop.ai/a.webp?address=0x1#sha256=0xab', 'https://www.rateloop.ai', 'image').toString()).toBe(
      'https://www.rateloop.ai/a.webp?address=0x1',
    );
  });
});
