// request-cost's summary (pure): the median round, the bind's I/O floor against issue 22's 2 ms, and
// claimkit's request against a bare node:https one.
import { describe, expect, test } from 'vitest';
import { type Cost, medianByCpu, type RequestCostResult, requestCostRows } from './request-cost.ts';

const cost = (cpuMs: number): Cost => ({ cpuMs, userMs: cpuMs, systemMs: 0, wallMs: 2 });

const result = (claimkit: number, bare: number, floor: number): RequestCostResult => ({
  method: '',
  requests: 2000,
  objectBytes: 3800,
  claimkitPatch: cost(claimkit),
  nodeHttpsPatch: cost(bare),
  claimkitPatchWithInformer: cost(claimkit + 0.05),
  watchEventCpuMs: 0.05,
  bindIoFloorCpuMs: floor,
});

describe('request-cost', () => {
  test('each mode reports its median round, whatever the order of the rounds', () => {
    expect(medianByCpu([cost(0.4), cost(0.2), cost(0.3)]).cpuMs).toBe(0.3);
    expect(medianByCpu([cost(0.2), cost(0.3), cost(0.9)]).cpuMs).toBe(0.3);
  });

  test('the floor is held against 2 ms, the client against 1.1x node:https', () => {
    const [floor, client] = requestCostRows(result(0.25, 0.25, 1.2));
    expect(floor![1]).toEqual({ value: 1.2, target: 2, met: true });
    expect(client![1]).toEqual({ value: 1, target: 1.1, met: true });
    const [floor2, client2] = requestCostRows(result(0.6, 0.3, 2.6));
    expect(floor2![1].met).toBe(false);
    expect(client2![1]).toEqual({ value: 2, target: 1.1, met: false });
    expect(client2![0]).toContain('0.6 / 0.3 ms');
  });
});
