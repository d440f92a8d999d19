/** Time comes in as an argument everywhere in core; this is the one tests and the simulator drive. */
export interface Clock {
  now(): number;
}

export class ManualClock implements Clock {
  private t: number;
  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.t = startMs;
  }
  now(): number {
    return this.t;
  }
  advance(ms: number): number {
    this.t += ms;
    return this.t;
  }
  set(ms: number): void {
    this.t = ms;
  }
}

/** A small deterministic PRNG (mulberry32) so model, simulator and tests replay from a seed. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 0x9e3779b9;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('pick from empty list');
    return xs[this.int(xs.length)]!;
  }
  chars(n: number, alphabet = 'bcdfghjklmnpqrstvwxz2456789'): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[this.int(alphabet.length)];
    return s;
  }
}
