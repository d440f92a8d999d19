// Claim-set claim names: `<set>-<5 chars>`, derived from the set's UID and an ordinal so that two
// writers deciding from the same (live) view create the same names and the second gets AlreadyExists.
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function claimNameFor(setName: string, setUid: string, ordinal: number): string {
  let h = fnv1a(`${setUid}/${ordinal}`);
  let suffix = '';
  for (let i = 0; i < 5; i++) {
    suffix += ALPHABET[h % ALPHABET.length];
    h = (Math.floor(h / ALPHABET.length) ^ fnv1a(`${suffix}${ordinal}`)) >>> 0;
  }
  return `${setName}-${suffix}`;
}

/** The first `count` names of this set that no existing object uses (deleting ones included). */
export function nextClaimNames(setName: string, setUid: string, taken: Set<string>, count: number): string[] {
  const out: string[] = [];
  for (let ordinal = 0; out.length < count && ordinal < count + taken.size + 1000; ordinal++) {
    const name = claimNameFor(setName, setUid, ordinal);
    if (!taken.has(name) && !out.includes(name)) out.push(name);
  }
  return out;
}
