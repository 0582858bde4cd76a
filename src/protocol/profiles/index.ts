// The known service profiles. The config picks one by id (`profile`, env LOOPSIGN_PROFILE, default below); the
// guards, hashes, routes and trust anchors all read the selected one.
import { UsageError } from '../../errors.js';
import { rateloopMain202608 } from './rateloop-main-2026-08.js';
import type { ServiceProfile } from './types.js';

export type { ServiceProfile } from './types.js';

export const PROFILES: readonly ServiceProfile[] = [rateloopMain202608];
export const DEFAULT_PROFILE_ID = rateloopMain202608.id;
export const DEFAULT_PROFILE: ServiceProfile = rateloopMain202608;

export function findProfile(id: string): ServiceProfile | undefined {
  return PROFILES.find((p) => p.id === id);
}

export function getProfile(id: string = DEFAULT_PROFILE_ID, where = 'profile'): ServiceProfile {
  const p = findProfile(id);
  if (!p) {
    throw new UsageError('unknown_profile', `${where}: "${id}" is not a known service profile`, {
      hint: `known profiles: ${PROFILES.map((x) => x.id).join(', ')}`,
    });
  }
  return p;
}
