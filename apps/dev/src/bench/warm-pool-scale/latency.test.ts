import { describe, expect, it } from 'vitest';
import { latencyOf, latencyOverTime } from './latency.ts';
import type { ClaimTimes } from './watches.ts';

const claims = new Map<string, ClaimTimes>([
  ['ns/a', { sentAt: 0, addedAt: 10, podLabelledAt: 30, specAt: 50, boundAt: 110 }],
  // Bound, but its pod's event was not seen: no stages.
  ['ns/b', { sentAt: 5, addedAt: 20, boundAt: 60 }],
  // Not Bound: left out.
  ['ns/c', { sentAt: 8, addedAt: 25 }],
  ['ns/late', { sentAt: 11_000, addedAt: 12_000, podLabelledAt: 12_010, specAt: 12_020, boundAt: 12_050 }],
]);

describe('claim latencies from the bench watches', () => {
  it('ADDED -> Bound, create sent -> Bound, and the stages between, of the Bound claims named', () => {
    const l = latencyOf(claims, ['ns/a', 'ns/b', 'ns/c', 'ns/unknown']);
    expect(l.addedToBound).toMatchObject({ n: 2, p50Ms: 40, p99Ms: 100, maxMs: 100 });
    expect(l.createSentToBound).toMatchObject({ n: 2, p50Ms: 55, maxMs: 110 });
    expect(l.stages.addedToPodLabelled).toMatchObject({ n: 1, p50Ms: 20 });
    expect(l.stages.podLabelledToSpec).toMatchObject({ n: 1, p50Ms: 20 });
    expect(l.stages.specToBound).toMatchObject({ n: 1, p50Ms: 60 });
  });

  it('over time: windows by ADDED arrival up to the last scheduled claim, each with its probe window', () => {
    const probe = { fromSecond: 10.2, controller: 'w1' };
    const windows = latencyOverTime({
      claims,
      names: ['ns/a', 'ns/b', 'ns/c', 'ns/late'],
      t0: 0,
      lastArrivalMs: 15_000,
      windowMs: 10_000,
      probeWindows: [probe],
    });
    expect(windows).toEqual([
      {
        fromSecond: 0,
        n: 2,
        p50Ms: 40,
        p99Ms: 100,
        maxMs: 100,
        stagesP99Ms: { addedToPodLabelled: 20, podLabelledToSpec: 20, specToBound: 60 },
        // a, b and c: their creates' answers and delivery on the claim watch.
        sentToAddedP99Ms: 17,
        sentToAddedMaxMs: 17,
      },
      {
        fromSecond: 10,
        n: 1,
        p50Ms: 50,
        p99Ms: 50,
        maxMs: 50,
        stagesP99Ms: { addedToPodLabelled: 10, podLabelledToSpec: 10, specToBound: 30 },
        sentToAddedP99Ms: 1000,
        sentToAddedMaxMs: 1000,
        probe,
      },
    ]);
    // One window for claims scheduled in the first 10 s only; none arrived in it: n 0.
    expect(
      latencyOverTime({ claims, names: [], t0: 0, lastArrivalMs: 0, windowMs: 10_000, probeWindows: [] }),
    ).toMatchObject([{ fromSecond: 0, n: 0 }]);
  });
});
