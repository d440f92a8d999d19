// The capture agent's token fence (C1's agent half), as the shipped agent and the simulator's run it.
import { describe, expect, it } from 'vitest';
import { TokenFence } from './token-fence.ts';

const CAP = 'ns/snap';

describe('TokenFence', () => {
  it('accepts rising tokens, refuses one below the highest, finds an accepted start again', () => {
    const f = new TokenFence();
    expect(f.judge(CAP, 3)).toEqual({ verdict: 'accept' });
    f.accept(CAP, 3, 'j3');
    expect(f.judge(CAP, 3)).toEqual({ verdict: 'existing', jobId: 'j3' });
    f.accept(CAP, 5, 'j5');
    // A retried start of a superseded token finds its (superseded) job: it never runs a second one.
    expect(f.judge(CAP, 3)).toEqual({ verdict: 'existing', jobId: 'j3' });
    expect(f.judge(CAP, 4)).toEqual({ verdict: 'stale', highest: 5 });
    // Once the agent forgets the superseded job, its token is stale like any other below the highest.
    f.forget(CAP, 3);
    expect(f.judge(CAP, 3)).toEqual({ verdict: 'stale', highest: 5 });
    expect(f.acceptedTokens.get(CAP)).toEqual([3, 5]);
    expect(f.violations()).toEqual([]);
    // Captures are fenced apart.
    expect(f.judge('ns/other', 1)).toEqual({ verdict: 'accept' });
  });

  it('undo restores the state before an acceptance the agent could not save', () => {
    const f = new TokenFence();
    f.accept(CAP, 2, 'j2');
    const before = f.state();
    const undo = f.accept(CAP, 7, 'j7');
    undo();
    expect(f.state()).toEqual(before);
    expect(f.judge(CAP, 7)).toEqual({ verdict: 'accept' });
    const first = new TokenFence();
    first.accept(CAP, 1, 'j1')();
    expect(first.state()).toEqual({ highest: {}, accepted: {} });
  });

  it('a restored state keeps fencing; jobs it remembers are found again; a broken history is reported', () => {
    const f = new TokenFence({ highest: { [CAP]: 5 }, accepted: { [CAP]: [5, 5] } });
    f.remember(CAP, 5, 'j5');
    expect(f.judge(CAP, 5)).toEqual({ verdict: 'existing', jobId: 'j5' });
    expect(f.judge(CAP, 4)).toEqual({ verdict: 'stale', highest: 5 });
    expect(f.violations()).toEqual(['ns/snap: token 5 accepted after 5']);
  });
});
