// Parsing and checking an armored age/tlock ciphertext against the on-chain validity rules (chain.md §9.8).
// tlock-js does not check that the stanza's chain hash is the one asked for; this does, before anything is sent.

export interface ParsedCiphertext {
  round: bigint;
  chainHash: string; // 64 hex, no 0x
  stanzaBodyBytes: number;
  payloadBytes: number;
}

export class CiphertextError extends Error {}

const HEADER = '-----BEGIN AGE ENCRYPTED FILE-----';
const FOOTER = '-----END AGE ENCRYPTED FILE-----';

function unpaddedBase64(text: string, what: string): Buffer {
  if (!/^[A-Za-z0-9+/]*$/.test(text)) throw new CiphertextError(`${what} is not unpadded base64`);
  return Buffer.from(text, 'base64');
}

export function parseArmoredCiphertext(bytes: Uint8Array): ParsedCiphertext {
  if (bytes.length < 1 || bytes.length > 2048) throw new CiphertextError(`ciphertext is ${bytes.length} bytes; the chain accepts 1 … 2048`);
  for (const b of bytes) {
    if (!((b >= 0x20 && b <= 0x7e) || b === 0x0a || b === 0x0d))
      throw new CiphertextError('ciphertext has a byte outside printable ASCII and CR/LF');
  }
  const text = Buffer.from(bytes)
    .toString('ascii')
    .replace(/[\r\n]+$/, '');
  const lines = text.split(/\r?\n/);
  if (lines[0] !== HEADER) throw new CiphertextError('ciphertext does not start with the age armor header');
  if (lines[lines.length - 1] !== FOOTER) throw new CiphertextError('ciphertext does not end with the age armor footer');
  const body = lines.slice(1, -1);
  for (const line of body) {
    if (line.length > 64 || !/^[A-Za-z0-9+/=]*$/.test(line))
      throw new CiphertextError('an armor line is longer than 64 characters or not base64');
  }
  const binary = Buffer.from(body.join(''), 'base64');
  const macMarker = binary.indexOf('\n--- ');
  if (macMarker < 0) throw new CiphertextError('age header has no MAC line');
  const headerText = binary.subarray(0, macMarker).toString('latin1');
  const macEnd = binary.indexOf('\n', macMarker + 5);
  if (macEnd < 0) throw new CiphertextError('age MAC line is not terminated');
  const mac = unpaddedBase64(binary.subarray(macMarker + 5, macEnd).toString('latin1'), 'MAC');
  if (mac.length !== 32) throw new CiphertextError(`age MAC is ${mac.length} bytes, expected 32`);
  const payloadBytes = binary.length - (macEnd + 1);
  if (payloadBytes < 65) throw new CiphertextError('age payload is shorter than 65 bytes');
  const headerLines = headerText.split('\n');
  if (headerLines[0] !== 'age-encryption.org/v1') throw new CiphertextError('not an age v1 file');
  const stanza = /^-> tlock (\d+) ([0-9a-f]{64})$/.exec(headerLines[1] ?? '');
  if (!stanza) throw new CiphertextError('the first recipient is not a tlock stanza "-> tlock <round> <chain hash>"');
  const rest = headerLines.slice(2);
  if (rest.some((l) => l.startsWith('-> '))) throw new CiphertextError('ciphertext has more than one recipient stanza');
  const stanzaBody = unpaddedBase64(rest.join(''), 'stanza body');
  if (stanzaBody.length < 80) throw new CiphertextError(`tlock stanza body is ${stanzaBody.length} bytes, expected at least 80`);
  return { round: BigInt(stanza[1]!), chainHash: stanza[2]!, stanzaBodyBytes: stanzaBody.length, payloadBytes };
}

/** Parse and require the stanza to name exactly this round and chain hash. */
export function checkCiphertextTarget(bytes: Uint8Array, targetRound: bigint, chainHash: string): ParsedCiphertext {
  const parsed = parseArmoredCiphertext(bytes);
  const want = chainHash.replace(/^0x/, '').toLowerCase();
  if (parsed.round !== targetRound)
    throw new CiphertextError(`ciphertext is for drand round ${parsed.round}, not the target round ${targetRound}`);
  if (parsed.chainHash !== want) throw new CiphertextError(`ciphertext is for drand chain ${parsed.chainHash}, not ${want}`);
  return parsed;
}
