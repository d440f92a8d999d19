// Hashes core needs without node:crypto: names and ids that need spread, not secrecy.

/** 64-bit FNV-1a over UTF-16 code units, as two 32-bit halves (core has no node:crypto). */
export function fnv1a64(s: string): string {
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (let i = 0; i < s.length; i++) {
    lo = (lo ^ s.charCodeAt(i)) >>> 0;
    // multiply (hi, lo) by the 64-bit FNV prime 0x100000001b3 = 2^40 + 0x1b3
    const loMul = lo * 0x1b3;
    const carry = Math.floor(loMul / 0x100000000);
    const newLo = loMul >>> 0;
    hi = (Math.imul(hi, 0x1b3) + carry + (lo << 8)) >>> 0;
    lo = newLo;
  }
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}
