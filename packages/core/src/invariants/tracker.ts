// Transition invariants, checked on every watch event (every write): tokens only grow (C1),
// results are written with the token that produced them (C1), takeovers only from dead or
// expired holders (C2), no direct A->B relabel (P1), scale-in never deletes a migrating claim (P4),
// a claim Lost under lostPolicy Fail never gets a pod again (L1), and a pod carrying a Capture's
// result as its source (claimkit.dev/source-*) was seeded from a result that was fenced (S1).

import { claimHandover } from '../admission/claim-handover.ts';
import { podNameOf, sourcePodOf } from '../api/claim-binding.ts';
import { LABEL_CLAIMED_BY } from '../api/constants.ts';
import { keyString } from '../api/meta.ts';
import { isPodFinished } from '../api/pod-predicates.ts';
import type { WatchEventType } from '../api/ports.ts';
import type { Capture, Kind, Pod, PodClaim } from '../api/types.ts';
import { isClaimLive } from '../capture/claim.ts';
import { classifyHolder } from '../capture/holder-liveness.ts';
import { unfencedResult } from '../capture/result-fence.ts';
import { isMigrating } from '../claimset/scale-in.ts';
import { isReplacement } from '../pool/bound-pod.ts';
import { isLostForGood, lostPolicyOf } from '../pool/lost-policy.ts';
import { podSeed } from '../pool/source.ts';
import type { Violation } from './check.ts';

export class InvariantTracker {
  readonly violations: Violation[] = [];
  /**
   * Set while a writer that bypasses core (a legacy operator, a person with kubectl) writes: the
   * transitions it causes are its own damage, not a controller's decision.
   */
  externalWriter = false;
  private readonly captures = new Map<string, Capture>();
  private readonly pods = new Map<string, Pod>();
  private readonly claims = new Map<string, PodClaim>();
  /** Tokens issued per capture, with the holder each went to. */
  private readonly issued = new Map<string, Map<number, string>>();
  /**
   * Every (capture, token, ref) that stood as a fenced result at some point of the history
   * (capture/result-fence.ts), as `<namespace>/<capture>|<token>|<ref>`: what a pool may seed from.
   */
  private readonly fencedSeeds = new Set<string>();
  private readonly now: () => number;

  constructor(now: () => number) {
    this.now = now;
  }

  observe(kind: Kind, type: WatchEventType, obj: unknown): void {
    if (kind === 'Capture') this.onCapture(type, obj as Capture);
    else if (kind === 'Pod') this.onPod(type, obj as Pod);
    else if (kind === 'PodClaim') this.onClaim(type, obj as PodClaim);
  }

  private key(o: { metadata: { namespace?: string; name: string } }): string {
    return keyString({ namespace: o.metadata.namespace ?? '', name: o.metadata.name });
  }

  private fail(invariant: Violation['invariant'], message: string, objects: string[]): void {
    this.violations.push({ invariant, message, objects });
  }

  private onCapture(type: WatchEventType, c: Capture): void {
    const k = this.key(c);
    const prev = this.captures.get(k);
    if (type === 'DELETED') {
      this.captures.delete(k);
      return;
    }
    const ps = prev?.status ?? {};
    const ns = c.status ?? {};
    const obj = [`Capture/${k}`];
    if ((ns.epoch ?? 0) < (ps.epoch ?? 0))
      this.fail('C1', `epoch went down from ${ps.epoch} to ${ns.epoch}`, obj);
    const tokens = this.issued.get(k) ?? new Map<number, string>();
    this.issued.set(k, tokens);
    if (ns.claim && ns.claim.token !== ps.claim?.token) {
      if (ns.claim.token <= (ps.epoch ?? 0)) {
        this.fail('C1', `new claim token ${ns.claim.token} is not above the previous epoch ${ps.epoch}`, obj);
      }
      tokens.set(ns.claim.token, ns.claim.holder.uid);
      // C2: a live claim is only taken from a holder that is definitely dead.
      const old = ps.claim;
      if (old && old.holder.uid !== ns.claim.holder.uid && isClaimLive(old, this.now())) {
        const pod = this.pods.get(
          keyString({ namespace: c.metadata.namespace ?? '', name: old.holder.name }),
        );
        const liveness = classifyHolder(old.holder, pod ? { found: true, pod } : { found: false });
        if (liveness.state !== 'dead') {
          this.fail(
            'C2',
            `live claim of ${old.holder.name} (token ${old.token}) was taken over while its holder was alive`,
            obj,
          );
        }
      }
    }
    if (ns.result && JSON.stringify(ns.result) !== JSON.stringify(ps.result)) {
      if (ps.result) this.fail('C1', 'a durable result was overwritten', obj);
      const holderUid = tokens.get(ns.result.token);
      if (ps.claim?.token !== ns.result.token) {
        this.fail(
          'C1',
          `result written with token ${ns.result.token} but the claim was ${ps.claim ? `token ${ps.claim.token}` : 'closed'}`,
          obj,
        );
      } else if (holderUid !== undefined && holderUid !== ns.result.capturedFrom.uid) {
        this.fail('C1', `result of token ${ns.result.token} claims to come from another pod`, obj);
      }
    }
    if (ns.result && unfencedResult(ns) === undefined)
      this.fencedSeeds.add(
        seedKey(c.metadata.namespace ?? '', c.metadata.name, ns.result.token, ns.result.ref),
      );
    this.captures.set(k, c);
  }

  private onPod(type: WatchEventType, p: Pod): void {
    const k = this.key(p);
    const prev = this.pods.get(k);
    if (type === 'DELETED') {
      this.pods.delete(k);
      return;
    }
    const moved = claimHandover(prev?.metadata.labels, p.metadata.labels);
    if (moved)
      this.fail('P1', `pod relabelled claimed-by ${moved.from} -> ${moved.to} in one write`, [`Pod/${k}`]);
    if (!this.externalWriter) this.checkSeed(prev, p);
    this.pods.set(k, p);
  }

  /**
   * S1: a pod that a controller gives a Capture's result as its source (the claimkit.dev/source-*
   * annotations, set when a pool creates it) carries a (capture, token, ref) that stood fenced.
   */
  private checkSeed(prev: Pod | undefined, p: Pod): void {
    const seed = podSeed(p);
    if (!seed) return;
    const ns = p.metadata.namespace ?? '';
    const key = seedKey(ns, seed.captureName, seed.token, seed.ref);
    const before = prev && podSeed(prev);
    if (before && seedKey(ns, before.captureName, before.token, before.ref) === key) return;
    if (this.fencedSeeds.has(key)) return;
    this.fail(
      'S1',
      `pod ${p.metadata.name} was seeded from result ${seed.ref} (token ${seed.token}) of capture ${seed.captureName}, which was never a fenced result`,
      [
        `Pod/${keyString({ namespace: ns, name: p.metadata.name })}`,
        `Capture/${keyString({ namespace: ns, name: seed.captureName })}`,
      ],
    );
  }

  private onClaim(type: WatchEventType, c: PodClaim): void {
    const k = this.key(c);
    const prev = this.claims.get(k);
    if (type === 'DELETED') {
      this.claims.delete(k);
      return;
    }
    const ownedBySet = (c.metadata.ownerReferences ?? []).some((r) => r.kind === 'PodClaimSet');
    if (
      ownedBySet &&
      prev &&
      !prev.metadata.deletionTimestamp &&
      c.metadata.deletionTimestamp &&
      isMigrating(prev)
    ) {
      this.fail('P4', 'scale-in deleted a migrating claim', [`PodClaim/${k}`]);
    }
    this.claims.set(k, c);
    if (!this.externalWriter) {
      this.checkPodKept(prev, c);
      // L1: a claim Lost for good under lostPolicy Fail is never given a pod again.
      if (prev && isLostForGood(prev) && podNameOf(c) && lostPolicyOf(c) === 'Fail') {
        this.fail('L1', `claim with lostPolicy Fail was Lost and got pod ${podNameOf(c)}`, [`PodClaim/${k}`]);
      }
    }
  }

  /**
   * P7: a claim gives up the pod its spec.podName referenced only when the pod is gone, being
   * deleted or finished (phase Succeeded or Failed: it never runs again), or another live claim
   * references it. Anything else (a stale or foreign label taking
   * the pod away) leaves a pod nobody holds.
   */
  private checkPodKept(prev: PodClaim | undefined, c: PodClaim): void {
    const pod = prev ? podNameOf(prev) : undefined;
    if (!prev || !pod || prev.metadata.deletionTimestamp || c.metadata.deletionTimestamp) return;
    if (podNameOf(c) === pod || sourcePodOf(c) === pod) return;
    const ns = c.metadata.namespace ?? '';
    const p = this.pods.get(keyString({ namespace: ns, name: pod }));
    if (!p || p.metadata.deletionTimestamp || isPodFinished(p)) return;
    // Another pod under that name (the bound one was deleted and replaced) is not the claim's pod.
    if (isReplacement(prev, p)) return;
    for (const other of this.claims.values()) {
      if (other.metadata.uid === c.metadata.uid || other.metadata.deletionTimestamp) continue;
      if ((other.metadata.namespace ?? '') !== ns) continue;
      if (podNameOf(other) === pod || sourcePodOf(other) === pod) return;
    }
    this.fail(
      'P7',
      `claim ${c.metadata.name} gave up pod ${pod} (claimed-by ${p.metadata.labels?.[LABEL_CLAIMED_BY] ?? 'none'}) while no other live claim referenced it`,
      [
        `PodClaim/${keyString({ namespace: ns, name: c.metadata.name })}`,
        `Pod/${keyString({ namespace: ns, name: pod })}`,
      ],
    );
  }
}

const seedKey = (ns: string, capture: string, token: number, ref: string): string =>
  `${ns}/${capture}|${token}|${ref}`;
