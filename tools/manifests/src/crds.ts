// deploy/crds: one CustomResourceDefinition per kind, from core's schemas (packages/core/src/schema).
import { crdFileName, crdFor, KIND_SCHEMAS, toYaml } from '@claimkit/core';
import { type GeneratedFile, generatedHeader } from './generated-file.ts';

export function crdFiles(): GeneratedFile[] {
  return Object.values(KIND_SCHEMAS).map((k) => {
    const crd = crdFor(k);
    const header = generatedHeader('#', `packages/core/src/schema (${k.kind})`, 'change the schema in core');
    return { path: `deploy/crds/${crdFileName(k)}`, text: header + toYaml(crd), objects: [crd] };
  });
}
