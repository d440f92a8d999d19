// /validate/podclaimsets and /validate/podpools — semantic checks the CRD schema cannot express.

import type { AdmissionRequest, Verdict, Violation } from '../api/admission-request.ts';
import { verdict } from '../api/admission-request.ts';
import {
  ANNOTATION_CLAIMED_BY_UID,
  ANNOTATION_SHARD,
  LABEL_CLAIM_SET,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  SOURCE_ANNOTATIONS,
} from '../api/constants.ts';
import { matchesSelector } from '../api/labels.ts';

import { shardPinProblem } from '../pool/shard-pin.ts';
import { isDnsSubdomain } from '../schema/pod-pool.ts';
import { claimSpecViolations } from './claim-spec.ts';
import { field, int, jsonEqual, nonEmpty, obj, str, stringMap } from './read.ts';
import { checkSelector } from './selector.ts';

export function validatePodClaimSet(input: AdmissionRequest): Verdict {
  if (input.operation !== 'CREATE' && input.operation !== 'UPDATE') return verdict([]);
  const v: Violation[] = [];
  const warnings: string[] = [];
  const spec = field(input.object, 'spec');
  if (obj(spec) === undefined)
    return verdict([{ field: 'spec', message: 'a PodClaimSet needs a spec object' }]);
  const replicas = field(spec, 'replicas');
  if (replicas !== undefined && (int(replicas) === undefined || (replicas as number) < 0)) {
    v.push({ field: 'spec.replicas', message: 'must be a non-negative integer' });
  }
  const selector = checkSelector(field(spec, 'selector'), 'spec.selector', v, 'claim');
  const template = field(spec, 'template');
  if (obj(template) === undefined) v.push({ field: 'spec.template', message: 'is required' });
  const labelsRaw = field(template, 'metadata', 'labels');
  const labels = stringMap(labelsRaw) ?? {};
  if (labelsRaw !== undefined && labelsRaw !== null && obj(labelsRaw) === undefined) {
    v.push({ field: 'spec.template.metadata.labels', message: 'must be a map of strings' });
  }
  // The claims a set creates carry its template labels and the claim-set label the controller adds
  // (reconcile/podclaimset.ts): a selector on that label finds them too.
  const setName = nonEmpty(field(input.object, 'metadata', 'name')) ?? input.name;
  const claimLabels = setName === undefined ? labels : { ...labels, [LABEL_CLAIM_SET]: setName };
  if (selector !== undefined && !matchesSelector(claimLabels, selector)) {
    v.push({
      field: 'spec.template.metadata.labels',
      message: 'must match spec.selector, or the set could never find the claims it creates',
    });
  }
  const poolName = nonEmpty(field(template, 'spec', 'poolName'));
  if (obj(template) !== undefined && poolName === undefined) {
    v.push({ field: 'spec.template.spec.poolName', message: 'is required' });
  }
  v.push(...claimSpecViolations(field(template, 'spec'), 'spec.template.spec'));
  if (input.operation === 'UPDATE') {
    const oldSpec = field(input.oldObject, 'spec');
    const oldPool = nonEmpty(field(oldSpec, 'template', 'spec', 'poolName'));
    if (oldPool !== undefined && poolName !== undefined && oldPool !== poolName) {
      v.push({
        field: 'spec.template.spec.poolName',
        message: `is immutable: ${JSON.stringify(oldPool)} -> ${JSON.stringify(poolName)}`,
      });
    }
    const oldSel = field(oldSpec, 'selector');
    if (oldSel !== undefined && !jsonEqual(oldSel, field(spec, 'selector'))) {
      warnings.push('spec.selector changed: claims matching only the old selector are no longer counted');
    }
  }
  return verdict(v, warnings);
}

export function validatePodPool(input: AdmissionRequest): Verdict {
  if (input.operation !== 'CREATE' && input.operation !== 'UPDATE') return verdict([]);
  const v: Violation[] = [];
  const warnings: string[] = [];
  const spec = field(input.object, 'spec');
  if (obj(spec) === undefined) return verdict([{ field: 'spec', message: 'a PodPool needs a spec object' }]);
  const nums: Record<string, number | undefined> = {};
  for (const f of ['minIdle', 'maxPods', 'drainSeconds']) {
    const raw = field(spec, f);
    nums[f] = int(raw);
    if (raw !== undefined && (nums[f] === undefined || nums[f]! < 0)) {
      v.push({ field: `spec.${f}`, message: 'must be a non-negative integer' });
      nums[f] = undefined;
    }
  }
  if (nums.minIdle !== undefined && nums.maxPods !== undefined && nums.minIdle > nums.maxPods) {
    v.push({
      field: 'spec.minIdle',
      message: `must not exceed spec.maxPods (${nums.minIdle} > ${nums.maxPods})`,
    });
  }
  const pin = field(input.object, 'metadata', 'annotations', ANNOTATION_SHARD);
  const pinProblem =
    pin === undefined ? undefined : shardPinProblem(typeof pin === 'string' ? pin : JSON.stringify(pin));
  if (pinProblem !== undefined)
    v.push({ field: `metadata.annotations[${ANNOTATION_SHARD}]`, message: pinProblem });
  const rp = field(spec, 'releasePolicy');
  if (rp !== undefined && rp !== 'Recycle' && rp !== 'Delete') {
    v.push({ field: 'spec.releasePolicy', message: 'must be Recycle or Delete' });
  }
  const template = field(spec, 'template');
  const containers = field(template, 'spec', 'containers');
  v.push(...sourceViolations(field(spec, 'source'), Array.isArray(containers) ? containers : undefined));
  if (obj(template) === undefined) {
    v.push({ field: 'spec.template', message: 'is required' });
    return verdict(v, warnings);
  }
  if (!Array.isArray(containers) || containers.length === 0) {
    v.push({ field: 'spec.template.spec.containers', message: 'a pool pod needs at least one container' });
  }
  const labels = stringMap(field(template, 'metadata', 'labels')) ?? {};
  if (Object.hasOwn(labels, LABEL_CLAIMED_BY)) {
    v.push({
      field: `spec.template.metadata.labels[${LABEL_CLAIMED_BY}]`,
      message: 'is managed by the claimkit controller: new pool pods would start out claimed',
    });
  }
  if (Object.hasOwn(labels, LABEL_STATE)) {
    warnings.push(`spec.template.metadata.labels[${LABEL_STATE}] is ignored: new pool pods start Idle`);
  }
  const annotations = stringMap(field(template, 'metadata', 'annotations')) ?? {};
  if (Object.hasOwn(annotations, ANNOTATION_CLAIMED_BY_UID)) {
    v.push({
      field: `spec.template.metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`,
      message: 'is managed by the claimkit controller: new pool pods would start out claimed',
    });
  }
  for (const key of SOURCE_ANNOTATIONS) {
    if (Object.hasOwn(annotations, key))
      v.push({
        field: `spec.template.metadata.annotations[${key}]`,
        message:
          'is managed by the claimkit controller: it names the fenced Capture result a pod was started from (spec.source)',
      });
  }
  const name = nonEmpty(field(input.object, 'metadata', 'name')) ?? input.name;
  const poolLabel = labels[LABEL_POOL];
  if (poolLabel !== undefined && name !== undefined && poolLabel !== name) {
    warnings.push(
      `spec.template.metadata.labels[${LABEL_POOL}] is ignored: pool pods are labelled with the pool's name (${name})`,
    );
  }
  return verdict(v, warnings);
}

/**
 * spec.source: an object naming a Capture (a DNS-1123 subdomain, in the pool's namespace) and
 * optionally the container an `image:` result replaces, which must be a container of the template.
 */
function sourceViolations(source: unknown, containers: unknown[] | undefined): Violation[] {
  if (source === undefined || source === null) return [];
  if (obj(source) === undefined) return [{ field: 'spec.source', message: 'must be an object' }];
  const v: Violation[] = [];
  const name = field(source, 'captureName');
  if (name === undefined || name === null || name === '') {
    v.push({
      field: 'spec.source.captureName',
      message: 'is required: the Capture whose fenced result seeds the pods',
    });
  } else if (typeof name !== 'string' || !isDnsSubdomain(name)) {
    v.push({
      field: 'spec.source.captureName',
      message: `must be a Capture name (a lowercase RFC 1123 subdomain of at most 253 characters), got ${JSON.stringify(name)}`,
    });
  }
  const container = field(source, 'container');
  if (container !== undefined && container !== null) {
    const names = (containers ?? []).map((c) => str(field(c, 'name'))).filter((n) => n !== undefined);
    if (typeof container !== 'string' || container === '') {
      v.push({ field: 'spec.source.container', message: 'must be a non-empty container name' });
    } else if (containers !== undefined && !names.includes(container)) {
      v.push({
        field: 'spec.source.container',
        message: `must name a container of spec.template.spec.containers (${names.map((n) => JSON.stringify(n)).join(', ') || 'none'}), got ${JSON.stringify(container)}`,
      });
    }
  }
  return v;
}
