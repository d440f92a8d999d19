import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { clone } from '../api/json.ts';
import { compileCel } from '../cel/program.ts';
import {
  capture,
  fullCapture,
  fullPodClaim,
  fullPodClaimSet,
  fullPodPool,
  podClaim,
  podClaimSet,
  podPool,
  withBackend,
} from '../testing/fixtures.ts';
import {
  type CustomKind,
  crdFor,
  defaultObject,
  type JSONSchemaProps,
  KIND_SCHEMAS,
  RULES_NOT_CHECKED,
  toYaml,
  validateObject,
} from './index.ts';
import { compileRule, rulesOf } from './rules.ts';

const FULL = {
  Capture: fullCapture(),
  PodPool: fullPodPool(),
  PodClaim: fullPodClaim(),
  PodClaimSet: fullPodClaimSet(),
};

/** Every property path of a schema, stopping where the schema keeps unknown fields or is a map. */
function schemaPaths(s: JSONSchemaProps, path = ''): string[] {
  const out: string[] = [];
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    const here = path ? `${path}.${k}` : k;
    out.push(here);
    if (p.type === 'array' && p.items) out.push(...schemaPaths(p.items, `${here}[]`));
    else if (p.properties && !p.additionalProperties) out.push(...schemaPaths(p, here));
  }
  return out;
}

/** Every key path of a value, following the schema (maps and preserved fields are leaves). */
function valuePaths(v: unknown, s: JSONSchemaProps | undefined, path = ''): string[] {
  if (Array.isArray(v)) return v.flatMap((x) => valuePaths(x, s?.items, `${path}[]`));
  if (v === null || typeof v !== 'object') return [];
  if (s?.additionalProperties) return [];
  const out: string[] = [];
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const here = path ? `${path}.${k}` : k;
    const p = s?.properties?.[k];
    if (!p && s?.['x-kubernetes-preserve-unknown-fields']) continue;
    out.push(here);
    if (k === 'metadata' && path === '') continue;
    out.push(...valuePaths(x, p, here));
  }
  return out;
}

describe('schemas and TypeScript types agree', () => {
  for (const kind of Object.keys(KIND_SCHEMAS) as CustomKind[]) {
    it(`${kind}: a full fixture validates and sets every schema field`, () => {
      const obj = FULL[kind];
      expect(validateObject(kind, obj)).toEqual([]);
      const schema = KIND_SCHEMAS[kind].schema;
      const have = new Set(valuePaths(obj, schema));
      const want = schemaPaths(schema).filter((p) => !p.startsWith('metadata.'));
      expect(want.filter((p) => !have.has(p))).toEqual([]);
      // ...and every key of the fixture is in the schema (nothing the server would prune).
      const known = new Set(schemaPaths(schema));
      expect([...have].filter((p) => !known.has(p))).toEqual([]);
      // Defaulting and pruning leave a full object unchanged.
      const d = clone(obj);
      defaultObject(kind, d);
      expect(d).toEqual(obj);
    });
  }

  it('minimal fixtures validate', () => {
    for (const o of [capture('a'), podPool('b'), podClaim('c'), podClaimSet('d')]) {
      expect(validateObject(o.kind, o)).toEqual([]);
    }
  });

  it('every CEL rule in a schema compiles in the core evaluator and reads only self and oldSelf', () => {
    const rules = Object.values(KIND_SCHEMAS).flatMap((k) => rulesOf(k.schema));
    expect(rules.length).toBeGreaterThanOrEqual(10);
    for (const r of rules) {
      const c = compileRule(r);
      expect(
        [...c.program.variables].every((v) => v === 'self' || v === 'oldSelf'),
        r.rule,
      ).toBe(true);
      if (r.messageExpression) compileCel(r.messageExpression);
    }
  });
});

describe('defaulting', () => {
  it('applies DESIGN.md defaults, nested ones inside a defaulted object too', () => {
    const c = { kind: 'Capture', metadata: { name: 'c' }, spec: { selector: {} } };
    defaultObject('Capture', c);
    expect(c.spec).toEqual({
      selector: {},
      leaseSeconds: 3000,
      timeoutSeconds: 1800,
      maxAttempts: 3,
      backend: { type: 'External' },
    });
    const p = { kind: 'PodPool', metadata: { name: 'p' }, spec: { template: { spec: { containers: [] } } } };
    defaultObject('PodPool', p);
    expect(p.spec).toMatchObject({ minIdle: 2, maxPods: 50, releasePolicy: 'Recycle', drainSeconds: 0 });
    const s = {
      kind: 'PodClaimSet',
      metadata: { name: 's' },
      spec: { template: { spec: { poolName: 'w' } } },
    };
    defaultObject('PodClaimSet', s);
    expect(s.spec).toMatchObject({ replicas: 1 });
  });

  it('keeps given values, replaces nulls of non-nullable fields, prunes unknown fields', () => {
    const c = {
      kind: 'Capture',
      metadata: { name: 'c', labels: { keep: 'me' }, unknownMeta: 1 },
      spec: {
        selector: {},
        leaseSeconds: 5,
        maxAttempts: null,
        junk: 1,
        backend: { type: 'Http', extra: 2 },
      },
      status: { phase: 'Pending', whatever: true },
      top: 1,
    };
    defaultObject('Capture', c);
    expect(c).toEqual({
      kind: 'Capture',
      metadata: { name: 'c', labels: { keep: 'me' }, unknownMeta: 1 },
      spec: {
        selector: {},
        leaseSeconds: 5,
        maxAttempts: 3,
        timeoutSeconds: 1800,
        backend: { type: 'Http' },
      },
      status: { phase: 'Pending' },
    });
  });

  it('keeps unknown fields of an embedded pod template spec', () => {
    const p = fullPodPool();
    p.spec.template.spec.restartPolicy = 'Always';
    (p.spec.template.spec.containers[0] as Record<string, unknown>).ports = [{ containerPort: 80 }];
    const d = clone(p);
    defaultObject('PodPool', d);
    expect(d).toEqual(p);
  });
});

describe('validation reports every violation with its field path', () => {
  it('minimum, enum, required, type', () => {
    const c = clone(capture('c')) as unknown as { spec: Record<string, unknown> };
    c.spec.leaseSeconds = -1;
    c.spec.timeoutSeconds = 1.5;
    c.spec.maxAttempts = 'x';
    c.spec.backend = { type: 'Bogus' };
    delete c.spec.selector;
    const errs = validateObject('Capture', c);
    expect(errs).toEqual(
      expect.arrayContaining([
        { field: 'spec.leaseSeconds', message: 'Invalid value: -1: should be greater than or equal to 1' },
        {
          field: 'spec.timeoutSeconds',
          message: 'Invalid value: "number": spec.timeoutSeconds in body must be of type integer: "number"',
        },
        {
          field: 'spec.maxAttempts',
          message: 'Invalid value: "string": spec.maxAttempts in body must be of type integer: "string"',
        },
        {
          field: 'spec.backend.type',
          message: 'Unsupported value: "Bogus": supported values: "External", "Http", "Kubelet"',
        },
        { field: 'spec.selector', message: 'Required value' },
        // A blocking violation (type, enum, required) keeps the server from running the CEL rules.
        RULES_NOT_CHECKED,
      ]),
    );
    expect(errs).toHaveLength(6);
  });

  it('a missing spec, bad timestamps, patterns and lengths', () => {
    expect(validateObject('PodClaim', { kind: 'PodClaim', metadata: { name: 'x' } })).toEqual([
      { field: 'spec', message: 'Required value' },
      RULES_NOT_CHECKED,
    ]);
    const c = fullCapture();
    c.status!.claim!.renewTime = 'yesterday';
    c.status!.conditions![0]!.reason = '';
    c.status!.claim!.holder.uid = '';
    const fields = validateObject('Capture', c).map((e) => e.field);
    expect(fields.sort()).toEqual([
      'status.claim.holder.uid',
      'status.claim.renewTime',
      'status.conditions[0].reason',
      'status.conditions[0].reason',
    ]);
  });

  it('CEL rules: Http needs url, minIdle <= maxPods, sourcePod != podName', () => {
    expect(validateObject('Capture', capture('c', withBackend('Http')))).toEqual([
      { field: 'spec.backend.url', message: 'Invalid value: url is required when type is Http' },
    ]);
    const p = fullPodPool();
    p.spec.minIdle = 11;
    expect(validateObject('PodPool', p).map((e) => e.field)).toEqual(['spec.minIdle']);
    const pc = fullPodClaim();
    pc.status!.sourcePod = pc.status!.podName!;
    expect(validateObject('PodClaim', pc)).toEqual([
      { field: 'status.sourcePod', message: 'Invalid value: sourcePod must differ from podName' },
    ]);
    pc.status!.sourcePod = '';
    expect(validateObject('PodClaim', pc)).toEqual([]);
  });

  it('transition rules: poolName is immutable on PodClaim and PodClaimSet, only on update', () => {
    const old = fullPodClaim();
    const next = clone(old);
    next.spec.poolName = 'other';
    expect(validateObject('PodClaim', next)).toEqual([]);
    expect(validateObject('PodClaim', next, old)).toEqual([
      { field: 'spec.poolName', message: 'Invalid value: "other": poolName is immutable' },
    ]);
    const set = fullPodClaimSet();
    const set2 = clone(set);
    set2.spec.template.spec.poolName = 'other';
    set2.spec.replicas = 7;
    expect(validateObject('PodClaimSet', set2, set).map((e) => e.field)).toEqual([
      'spec.template.spec.poolName',
    ]);
  });
});

describe('deploy/crds', () => {
  it('names, short names, category, subresources', () => {
    const names = Object.values(KIND_SCHEMAS).map((k) => [crdFor(k).metadata.name, ...k.shortNames]);
    expect(names).toEqual([
      ['captures.claimkit.dev', 'cap'],
      ['podpools.claimkit.dev', 'pool'],
      ['podclaims.claimkit.dev', 'pc'],
      ['podclaimsets.claimkit.dev', 'pcs'],
    ]);
    for (const k of Object.values(KIND_SCHEMAS)) {
      const v = crdFor(k).spec.versions[0]!;
      expect(v.subresources.status).toEqual({});
      expect(k.categories).toEqual(['claimkit']);
      expect(v.additionalPrinterColumns.at(-1)?.name).toBe('Age');
    }
    expect(crdFor(KIND_SCHEMAS.PodClaimSet).spec.versions[0]!.subresources.scale).toEqual({
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.labelSelector',
    });
  });

  it('kubectl get shows Ready, Reason (the Ready condition every kind sets) and Age for every kind', () => {
    const cond = (f: string) => `.status.conditions[?(@.type=='Ready')].${f}`;
    for (const k of Object.values(KIND_SCHEMAS)) {
      const cols = crdFor(k).spec.versions[0]!.additionalPrinterColumns;
      const shown = cols.filter((c) => !c.priority).map((c) => c.name);
      // Default view: the kind's own columns, then Ready, Reason, Age.
      expect(shown.slice(-3), k.kind).toEqual(['Ready', 'Reason', 'Age']);
      expect(
        cols.find((c) => c.name === 'Ready'),
        k.kind,
      ).toEqual({
        name: 'Ready',
        type: 'string',
        jsonPath: cond('status'),
      });
      expect(cols.find((c) => c.name === 'Reason')?.jsonPath, k.kind).toBe(cond('reason'));
      expect(
        cols.find((c) => c.name === 'Message'),
        k.kind,
      ).toMatchObject({
        jsonPath: cond('message'),
        priority: 1,
      });
      expect(cols.at(-1), k.kind).toEqual({
        name: 'Age',
        type: 'date',
        jsonPath: '.metadata.creationTimestamp',
      });
      expect(new Set(cols.map((c) => c.name)).size, k.kind).toBe(cols.length);
    }
  });

  it('toYaml round-trips awkward strings', () => {
    const v = {
      a: ['', 'true', 'no', '1', '1.5', '0x1f', 'a: b', 'x #y', '-lead', 'trail:', "it's", '"q"', 'ok text'],
      b: { 'key with: colon': [{ x: [] }, { y: {} }, [1, [2]]] },
      c: null,
      d: 'multi\nline',
    };
    expect(parse(toYaml(v))).toEqual(v);
  });
});
