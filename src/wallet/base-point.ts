// noble builds a table of multiples of secp256k1's base point on the first multiplication by it (an address from a
// key, a signature, a recovery) and reuses it after. With noble's default 8-bit window the table is 4,224 points:
// ~30 ms of CPU, which pays for itself only after some hundred signatures. A loopsign run makes a handful (the
// address, a few signatures, perhaps a recovery), so a run that is about to multiply by the base point asks for a
// 4-bit window first: 520 points, and each multiplication ~65 additions instead of ~33. Measured in a fresh process
// (the address and 4 signatures): 50 ms of CPU with the default, 24 ms with this. The results are the same points,
// by the same constant-time wNAF; only the table's size changes.
import { secp256k1 } from '@noble/curves/secp256k1.js';

const WINDOW_BITS = 4;
let set = false;

/** Called before a run's first multiplication by the base point: sets (once) the small table described above. */
export function fewBasePointMultiplications(): void {
  if (set) return;
  set = true;
  secp256k1.utils.precompute(WINDOW_BITS);
}
