// A person with kubectl: random direct writes that bypass core, made as the `kubectl` user with no
// preconditions (what `kubectl patch` / `kubectl edit` send). Each write is one the seeds' stories
// or a confused operator make: stale-token capture results, epoch edits, relabelling a pool pod to
// another claim, finalizer removal, claim spec edits, unlabelling a Bound pod, and seed B's literal
// state forced at a random moment relative to the deletion of the claim that holds the pod. With
// admission on, the API server refuses the harmful ones; with it off, they land.
import { nodeNameOf, podNameOf } from '../api/claim-binding.ts';
import {
  ANNOTATION_CLAIMED_BY_UID,
  FINALIZER_RELEASE,
  LABEL_CLAIMED_BY,
  LABEL_STATE,
} from '../api/constants.ts';
import { isApiError } from '../api/errors.ts';
import { keyOf, toTimestamp } from '../api/meta.ts';
import type { MergePatch } from '../api/ports.ts';
import type { PodClaim } from '../api/types.ts';
import { isMigrating } from '../claimset/scale-in.ts';
import type { UserInfo } from '../model/admission.ts';
import type { ApiModel } from '../model/api-model.ts';
import type { Rng } from '../model/clock.ts';
import { claimedBy, poolOf, stateOf } from '../pool/pods.ts';

export const KUBECTL_USER: UserInfo = { username: 'kubectl', groups: ['system:authenticated'] };

export type KubectlWrite =
  /** Capture status result with an earlier token (below the epoch), phase Captured; the claim closed or left open. */
  | { op: 'staleResult'; http: boolean; back: number; closeClaim: boolean }
  | { op: 'epoch'; http: boolean; delta: number }
  /** A pool pod labelled for claim A is labelled for B: in one write, or remove-then-add in two. */
  | { op: 'relabel'; pod: number; claim: number; twoWrites: boolean }
  /** An unlabelled pool pod is labelled Bound for a claim. */
  | { op: 'label'; pod: number; claim: number }
  /** A Bound pod's claimed-by label goes (the seed's reclaimCN), with or without the uid annotation. */
  | { op: 'unlabel'; pod: number; annotationToo: boolean }
  | { op: 'dropFinalizer'; claim: number; deletingOnly: boolean }
  /** status.podName pointed at the pod another claim holds. */
  | { op: 'podName'; claim: number; other: number }
  | { op: 'selfMigration'; claim: number }
  | { op: 'nodeName'; claim: number; node: number }
  /**
   * Seed B's literal state: claim B's podName = pod X, X labelled claimed-by=A (Bound), A deleted
   * with its finalizer pending; the deletion before, after, or left to later actions.
   */
  | {
      op: 'seedB';
      claim: number;
      holder: number;
      order: 'pointThenDelete' | 'deleteThenPoint' | 'pointOnly';
    };

export type KubectlOp = KubectlWrite['op'];

export const KUBECTL_OPS: readonly KubectlOp[] = [
  'staleResult',
  'epoch',
  'relabel',
  'label',
  'unlabel',
  'dropFinalizer',
  'podName',
  'selfMigration',
  'nodeName',
  'seedB',
];

export function genKubectlWrite(rng: Rng, ops: readonly KubectlOp[] = KUBECTL_OPS): KubectlWrite {
  const i = rng.int(8);
  const j = rng.int(8);
  const op = rng.pick(ops);
  switch (op) {
    case 'staleResult':
      return { op, http: rng.chance(0.5), back: rng.int(3), closeClaim: rng.chance(0.5) };
    case 'epoch':
      return { op, http: rng.chance(0.5), delta: rng.pick([-3, -1, 1, 2]) };
    case 'relabel':
      return { op, pod: i, claim: j, twoWrites: rng.chance(0.5) };
    case 'label':
      return { op, pod: i, claim: j };
    case 'unlabel':
      return { op, pod: i, annotationToo: rng.chance(0.5) };
    case 'dropFinalizer':
      return { op, claim: i, deletingOnly: rng.chance(0.7) };
    case 'podName':
      return { op, claim: i, other: j };
    case 'selfMigration':
      return { op, claim: i };
    case 'nodeName':
      return { op, claim: i, node: rng.int(3) };
    case 'seedB':
      return {
        op,
        claim: i,
        holder: j,
        order: rng.pick(['pointThenDelete', 'deleteThenPoint', 'pointOnly'] as const),
      };
  }
}

export interface KubectlOutcome {
  /** Writes the API server accepted. */
  accepted: number;
  /** Writes it refused (Invalid or Forbidden: schema, CEL or admission). */
  refused: number;
}

const nth = <T>(xs: T[], i: number): T | undefined => (xs.length === 0 ? undefined : xs[i % xs.length]);

/** Runs one kubectl write against namespace `ns`; nothing happens when no object fits. */
export async function applyKubectlWrite(
  model: ApiModel,
  ns: string,
  w: KubectlWrite,
): Promise<KubectlOutcome> {
  const kubectl = model.as(KUBECTL_USER);
  const out: KubectlOutcome = { accepted: 0, refused: 0 };
  const send = async (p: Promise<unknown>): Promise<boolean> => {
    try {
      await p;
      out.accepted++;
      return true;
    } catch (e) {
      if (!isApiError(e)) throw e;
      if (e.reason === 'Invalid' || e.reason === 'Forbidden') out.refused++;
      return false;
    }
  };
  const claims = model.listNow('PodClaim', { namespace: ns });
  const live = claims.filter((c) => !c.metadata.deletionTimestamp);
  const poolPods = model
    .listNow('Pod', { namespace: ns })
    .filter((p) => poolOf(p) && !p.metadata.deletionTimestamp);

  switch (w.op) {
    case 'staleResult': {
      const key = { namespace: ns, name: w.http ? 'cap-http' : 'cap-ext' };
      const c = model.tryGetNow('Capture', key);
      const epoch = c?.status?.epoch ?? 0;
      // A token issued earlier: stale, but one that really existed.
      if (epoch < 2) break;
      const token = Math.max(1, epoch - 1 - w.back);
      const status: MergePatch = {
        phase: 'Captured',
        result: {
          ref: `kubectl://${key.name}/${token}`,
          token,
          capturedFrom: { name: 'worker-0', uid: 'typed-by-hand' },
          completionTime: toTimestamp(model.clock.now()),
        },
      };
      if (w.closeClaim) status.claim = null;
      await send(kubectl.patchStatus('Capture', key, { status }));
      break;
    }
    case 'epoch': {
      const key = { namespace: ns, name: w.http ? 'cap-http' : 'cap-ext' };
      const c = model.tryGetNow('Capture', key);
      if (!c) break;
      const epoch = Math.max(0, (c.status?.epoch ?? 0) + w.delta);
      if (epoch === (c.status?.epoch ?? 0)) break;
      await send(kubectl.patchStatus('Capture', key, { status: { epoch } }));
      break;
    }
    case 'relabel': {
      const pod = nth(
        poolPods.filter((p) => claimedBy(p)),
        w.pod,
      );
      const to =
        pod &&
        nth(
          live.filter((c) => c.metadata.name !== claimedBy(pod)),
          w.claim,
        );
      if (!pod || !to) break;
      if (w.twoWrites && !(await send(kubectl.patch('Pod', keyOf(pod), unlabelPatch(true))))) break;
      await send(
        kubectl.patch('Pod', keyOf(pod), labelPatch(to, stateOf(pod) === 'Draining' ? 'Draining' : 'Bound')),
      );
      break;
    }
    case 'label': {
      const pod = nth(
        poolPods.filter((p) => !claimedBy(p)),
        w.pod,
      );
      const to = nth(live, w.claim);
      if (pod && to) await send(kubectl.patch('Pod', keyOf(pod), labelPatch(to, 'Bound')));
      break;
    }
    case 'unlabel': {
      const pod = nth(
        poolPods.filter((p) => claimedBy(p) && stateOf(p) === 'Bound'),
        w.pod,
      );
      if (pod) await send(kubectl.patch('Pod', keyOf(pod), unlabelPatch(w.annotationToo)));
      break;
    }
    case 'dropFinalizer': {
      const c = nth(
        claims.filter(
          (x) =>
            (x.metadata.finalizers ?? []).includes(FINALIZER_RELEASE) &&
            (!w.deletingOnly || x.metadata.deletionTimestamp),
        ),
        w.claim,
      );
      if (!c) break;
      const rest = (c.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_RELEASE);
      await send(
        kubectl.patch('PodClaim', keyOf(c), { metadata: { finalizers: rest.length ? rest : null } }),
      );
      break;
    }
    case 'podName': {
      const holders = live.filter((c) => podNameOf(c));
      const other = nth(holders, w.other);
      const c =
        other &&
        nth(
          live.filter((x) => x.metadata.uid !== other.metadata.uid),
          w.claim,
        );
      if (c && other)
        await send(
          kubectl.patchStatus('PodClaim', keyOf(c), {
            status: { podName: podNameOf(other) ?? null, podUID: null },
          }),
        );
      break;
    }
    case 'selfMigration': {
      const c = nth(
        live.filter((x) => podNameOf(x)),
        w.claim,
      );
      if (c)
        await send(
          kubectl.patchStatus('PodClaim', keyOf(c), { status: { sourcePod: podNameOf(c) ?? null } }),
        );
      break;
    }
    case 'nodeName': {
      const nodeName = `node-${w.node}`;
      const c = nth(
        live.filter((x) => podNameOf(x) && nodeNameOf(x) !== nodeName),
        w.claim,
      );
      if (c) await send(kubectl.patchStatus('PodClaim', keyOf(c), { status: { nodeName } }));
      break;
    }
    case 'seedB': {
      const byName = new Map(poolPods.map((p) => [p.metadata.name, p]));
      // A migrating claim is left alone: the tracker holds any deletion of a migrating set claim
      // against scale-in (P4), and the seed's claim A was not migrating.
      const holders = live.filter((c) => {
        const name = podNameOf(c);
        const x = name ? byName.get(name) : undefined;
        return x !== undefined && !isMigrating(c) && claimedBy(x) === c.metadata.name;
      });
      const a = nth(holders, w.holder);
      const b =
        a &&
        nth(
          live.filter((c) => c.metadata.uid !== a.metadata.uid),
          w.claim,
        );
      if (!a || !b) break;
      const point = () =>
        send(
          kubectl.patchStatus('PodClaim', keyOf(b), {
            status: { podName: podNameOf(a) ?? null, podUID: null },
          }),
        );
      const remove = () => send(kubectl.delete('PodClaim', keyOf(a)));
      if (w.order === 'deleteThenPoint') {
        await remove();
        await point();
      } else {
        await point();
        if (w.order === 'pointThenDelete') await remove();
      }
      break;
    }
  }
  return out;
}

function labelPatch(c: PodClaim, state: 'Bound' | 'Draining'): MergePatch {
  return {
    metadata: {
      labels: { [LABEL_CLAIMED_BY]: c.metadata.name, [LABEL_STATE]: state },
      annotations: { [ANNOTATION_CLAIMED_BY_UID]: c.metadata.uid ?? '' },
    },
  };
}

function unlabelPatch(annotationToo: boolean): MergePatch {
  return {
    metadata: {
      labels: { [LABEL_CLAIMED_BY]: null },
      ...(annotationToo ? { annotations: { [ANNOTATION_CLAIMED_BY_UID]: null } } : {}),
    },
  };
}
