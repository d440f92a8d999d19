import { describe, expect, it } from 'vitest';
import { pinnedToShard, podPool } from '../testing/fixtures.ts';
import { MAX_SHARDS, shardPin, shardPinProblem } from './shard-pin.ts';

describe('a pool’s shard pin (claimkit.dev/shard)', () => {
  it('reads the pin from the pool; a malformed one is no pin (the name is hashed), and says what is wrong', () => {
    expect(shardPin(podPool('web', pinnedToShard(3)))).toBe(3);
    expect(shardPin(podPool('web', pinnedToShard(0)))).toBe(0);
    expect(shardPin(podPool('web'))).toBeUndefined();
    expect(shardPin(undefined)).toBeUndefined();
    for (const bad of ['-1', '1.5', 'one', '', ' 1', '01', String(MAX_SHARDS), '1e2']) {
      expect(shardPin(podPool('web', pinnedToShard(bad))), bad).toBeUndefined();
      expect(shardPinProblem(bad), bad).toContain(`from 0 to ${MAX_SHARDS - 1}`);
    }
    expect(shardPinProblem('255')).toBeUndefined();
  });
});
