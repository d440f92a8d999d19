import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapFlagsToSet } from './heap-flags.ts';

describe('the heap growth cap the controller sets on itself', () => {
  it('is set under a plain `node` (the npm bin) and left to the user when they chose one', () => {
    expect(heapFlagsToSet([], undefined)).toEqual(['--heap-growing-percent=30']);
    expect(heapFlagsToSet(['--max-semi-space-size=8'], '--enable-source-maps')).toEqual([
      '--heap-growing-percent=30',
    ]);
    expect(heapFlagsToSet(['--heap-growing-percent=50'], undefined)).toEqual([]);
    expect(heapFlagsToSet([], '--max-old-space-size=400 --heap_growing_percent=10')).toEqual([]);
    // Another flag that merely starts alike is not the user's choice.
    expect(heapFlagsToSet(['--heap-growing-percentage-x'], undefined)).toEqual(['--heap-growing-percent=30']);
  });

  it("is the image's own value, so the image and the npm bin run alike", () => {
    const dockerfile = readFileSync(join(import.meta.dirname, '../Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  });
});
