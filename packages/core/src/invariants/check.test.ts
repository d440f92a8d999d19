// Each invariant checker detects its violation and accepts the healthy state next to it.
import { describe, expect, test } from 'vitest';
import {
  ANNOTATION_SOURCE_CAPTURE,
  ANNOTATION_SOURCE_REF,
  ANNOTATION_SOURCE_TOKEN,
  LABEL_CLAIMED_BY,
} from '../api/constants.ts';
import {
  boundTo,
  capture,
  captured,
  captureStatus,
  claimedBy,
  deleting,
  heldBy,
  idle,
  inPool,
  inSet,
  migratingFrom,
  pod,
  podClaim,
  podClaimSet,
  ready,
  T0_MS,
  withAnnotations,
  withLabels,
  withSelector,
} from '../testing/fixtures.ts';
import { checkConvergence, checkSafety } from './check.ts';
import { InvariantTracker } from './tracker.ts';

const ids = (vs: { invariant: string }[]) => vs.map((v) => v.invariant);

describe('safety checks', () => {
  test('P1: a pod referenced by two live claims', () => {
    const a = podClaim('a', boundTo('p'));
    const b = podClaim('b', boundTo('p'));
    expect(ids(checkSafety({ captures: [], pods: [pod('p', claimedBy(a))], claims: [a, b] }))).toContain(
      'P1',
    );
    // A deleting claim does not hold a pod against a live one.
    const gone = podClaim('a', boundTo('p'), deleting());
    expect(checkSafety({ captures: [], pods: [pod('p', claimedBy(b))], claims: [gone, b] })).toEqual([]);
  });

  test('P1: a referenced pod labelled for another claim', () => {
    const a = podClaim('a', boundTo('p'));
    expect(ids(checkSafety({ captures: [], pods: [pod('p', claimedBy('x'))], claims: [a] }))).toEqual(['P1']);
    expect(checkSafety({ captures: [], pods: [pod('p', claimedBy(a))], claims: [a] })).toEqual([]);
  });

  test('C1: a claim token that is not the epoch, a result token never issued', () => {
    const c = capture('c', heldBy({ name: 'p', uid: 'u' }, { token: 3 }));
    c.status!.epoch = 4;
    expect(ids(checkSafety({ captures: [c], pods: [], claims: [] }))).toEqual(['C1']);
    const r = capture('r');
    r.status = {
      epoch: 1,
      result: { ref: 'x', token: 2, capturedFrom: { name: 'p', uid: 'u' }, completionTime: 'now' },
    };
    expect(ids(checkSafety({ captures: [r], pods: [], claims: [] }))).toEqual(['C1']);
  });
});

describe('convergence checks', () => {
  const now = T0_MS + 60_000;

  test('P2: Bound to a missing pod; Lost with podName; Pending while an Idle pod exists', () => {
    const bound = podClaim('a', boundTo('gone'));
    expect(ids(checkConvergence({ captures: [], pods: [], claims: [bound] }, now))).toEqual(['P2']);
    const lostWithPod = podClaim('b', boundTo('p'), (o) => {
      o.status = { ...o.status, phase: 'Lost' };
    });
    expect(
      ids(
        checkConvergence(
          { captures: [], pods: [pod('p', claimedBy(lostWithPod))], claims: [lostWithPod] },
          now,
        ),
      ),
    ).toEqual(['P2']);
    const pending = podClaim('c');
    expect(
      ids(
        checkConvergence(
          { captures: [], pods: [pod('i', inPool('web'), idle(), ready())], claims: [pending] },
          now,
        ),
      ),
    ).toEqual(['P2']);
  });

  test('P3: a claim still deleting', () => {
    const d = podClaim('a', deleting());
    expect(ids(checkConvergence({ captures: [], pods: [], claims: [d] }, now))).toEqual(['P3']);
  });

  test('P5: a label naming a missing claim, or a claim that does not reference the pod', () => {
    expect(
      ids(checkConvergence({ captures: [], pods: [pod('p', claimedBy('ghost'))], claims: [] }, now)),
    ).toEqual(['P5']);
    const a = podClaim('a', boundTo('q'));
    const res = checkConvergence(
      { captures: [], pods: [pod('q', claimedBy(a)), pod('p', claimedBy(a))], claims: [a] },
      now,
    );
    expect(ids(res)).toEqual(['P5']);
    // The source of a migration is referenced too.
    const m = podClaim('m', boundTo('t'), migratingFrom('s'));
    expect(
      checkConvergence(
        { captures: [], pods: [pod('t', claimedBy(m)), pod('s', claimedBy(m))], claims: [m] },
        now,
      ),
    ).toEqual([]);
  });

  test('C2: a live claim held by a dead holder while a Ready candidate exists', () => {
    const c = capture('c', withSelector({ matchLabels: { app: 'w' } }), heldBy({ name: 'dead', uid: 'u1' }));
    const candidate = pod('w2', withLabels({ app: 'w' }), ready());
    expect(ids(checkConvergence({ captures: [c], pods: [candidate], claims: [] }, now))).toEqual(['C2']);
    // No candidate: nothing to take over to.
    expect(checkConvergence({ captures: [c], pods: [], claims: [] }, now)).toEqual([]);
  });
});

describe('transition tracker', () => {
  test('C1: tokens only grow and results carry the closing claim token', () => {
    const t = new InvariantTracker(() => T0_MS);
    const c = capture('c', heldBy({ name: 'p', uid: 'u' }, { token: 2 }));
    t.observe('Capture', 'ADDED', c);
    const lower = capture('c', heldBy({ name: 'q', uid: 'v' }, { token: 1 }));
    lower.status!.epoch = 1;
    t.observe('Capture', 'MODIFIED', lower);
    expect(ids(t.violations)).toContain('C1');
  });

  test('C2: a takeover from a live holder is flagged; from a dead one it is not', () => {
    const t = new InvariantTracker(() => T0_MS + 1000);
    const holder = pod('p', ready());
    t.observe('Pod', 'ADDED', holder);
    t.observe('Capture', 'ADDED', capture('c', heldBy(holder, { token: 1 })));
    t.observe('Capture', 'MODIFIED', capture('c', heldBy({ name: 'q', uid: 'v' }, { token: 2 })));
    expect(ids(t.violations)).toEqual(['C2']);
    const t2 = new InvariantTracker(() => T0_MS + 1000);
    t2.observe('Capture', 'ADDED', capture('c', heldBy(holder, { token: 1 })));
    t2.observe('Capture', 'MODIFIED', capture('c', heldBy({ name: 'q', uid: 'v' }, { token: 2 })));
    expect(t2.violations).toEqual([]);
  });

  test('P1: no direct A->B relabel', () => {
    const t = new InvariantTracker(() => T0_MS);
    t.observe('Pod', 'ADDED', pod('p', claimedBy('a')));
    const stripped = pod('p', claimedBy('a'));
    delete stripped.metadata.labels![LABEL_CLAIMED_BY];
    t.observe('Pod', 'MODIFIED', stripped);
    t.observe('Pod', 'MODIFIED', pod('p', claimedBy('b')));
    expect(t.violations).toEqual([]);
    t.observe('Pod', 'MODIFIED', pod('p', claimedBy('c')));
    expect(ids(t.violations)).toEqual(['P1']);
  });

  test('P4: a claim set deleting a migrating claim', () => {
    const t = new InvariantTracker(() => T0_MS);
    const set = podClaimSet('s');
    t.observe('PodClaim', 'ADDED', podClaim('a', inSet(set), boundTo('t'), migratingFrom('s')));
    t.observe(
      'PodClaim',
      'MODIFIED',
      podClaim('a', inSet(set), boundTo('t'), migratingFrom('s'), deleting()),
    );
    expect(ids(t.violations)).toEqual(['P4']);
  });

  test('S1: a pod seeded from a (capture, token, ref) that never stood fenced; a fenced one, even gone since, is fine', () => {
    const t = new InvariantTracker(() => T0_MS);
    const seeded = (name: string, token: number, ref: string) =>
      pod(
        name,
        inPool('warm'),
        withAnnotations({
          [ANNOTATION_SOURCE_CAPTURE]: 'snap',
          [ANNOTATION_SOURCE_TOKEN]: String(token),
          [ANNOTATION_SOURCE_REF]: ref,
        }),
      );
    // These capture writes bypass the fence (C1 flags them); only S1 is looked at here.
    const s1 = () => ids(t.violations).filter((x) => x === 'S1');
    // A result beside an open claim, then one below the epoch: neither is fenced.
    t.observe(
      'Capture',
      'ADDED',
      capture('snap', captured('early', { token: 1 }), heldBy({ name: 'h', uid: 'u' })),
    );
    t.observe(
      'Capture',
      'MODIFIED',
      capture('snap', captureStatus({ epoch: 3 }), captured('stale', { token: 2 })),
    );
    t.observe('Pod', 'ADDED', seeded('a', 1, 'early'));
    t.observe('Pod', 'ADDED', seeded('b', 2, 'stale'));
    expect(s1()).toEqual(['S1', 'S1']);
    t.violations.length = 0;
    // The fenced complete; the result is then discarded, and pods of it are still fine.
    t.observe(
      'Capture',
      'MODIFIED',
      capture('snap', captureStatus({ epoch: 3 }), captured('ok', { token: 3 })),
    );
    t.observe('Capture', 'MODIFIED', capture('snap', captureStatus({ epoch: 3, phase: 'Pending' })));
    t.observe('Pod', 'ADDED', seeded('c', 3, 'ok'));
    t.observe('Pod', 'MODIFIED', seeded('a', 1, 'early')); // unchanged: judged when it was seeded
    expect(s1()).toEqual([]);
    // Another ref under a fenced token is not that result; and a pod written by someone else is theirs.
    t.observe('Pod', 'MODIFIED', seeded('c', 3, 'forged'));
    expect(s1()).toEqual(['S1']);
    t.externalWriter = true;
    t.observe('Pod', 'ADDED', seeded('d', 9, 'typed-by-hand'));
    expect(s1()).toEqual(['S1']);
  });
});
