import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@claimkit/e2e/harness';
import { describe, expect, it } from 'vitest';
import { imageNodeFlags } from './controller-process.ts';

describe('the benches run the controller with its image Node flags', () => {
  it('reads them from the Dockerfile ENTRYPOINT', () => {
    const flags = imageNodeFlags(readFileSync(join(repoRoot, 'packages/controller/Dockerfile'), 'utf8'));
    expect(flags).toEqual(['--max-semi-space-size=8', '--heap-growing-percent=30']);
    expect(imageNodeFlags('FROM x\nENTRYPOINT ["node", "--a=1", "--b", "/app/main.js"]\n')).toEqual([
      '--a=1',
      '--b',
    ]);
    expect(() => imageNodeFlags('ENTRYPOINT ["/bin/sh"]')).toThrow(/not \["node"/);
  });
});
