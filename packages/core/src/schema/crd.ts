// Turns a KindSchema into the apiextensions.k8s.io/v1 CustomResourceDefinition that deploy/crds holds.
import { GROUP, VERSION } from '../api/constants.ts';
import type { JSONSchemaProps, KindSchema } from '../api/crd-schema.ts';

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: 'Namespaced';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JSONSchemaProps };
      subresources: {
        status: Record<string, never>;
        scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
      };
      additionalPrinterColumns: KindSchema['printerColumns'];
    }[];
  };
}

export function crdFor(k: KindSchema): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${k.plural}.${GROUP}`,
      labels: { 'app.kubernetes.io/name': 'claimkit', 'app.kubernetes.io/component': 'crd' },
    },
    spec: {
      group: GROUP,
      names: {
        kind: k.kind,
        listKind: k.listKind,
        plural: k.plural,
        singular: k.singular,
        shortNames: k.shortNames,
        categories: k.categories,
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: k.schema },
          subresources: { status: {}, ...(k.scale ? { scale: { ...k.scale } } : {}) },
          additionalPrinterColumns: k.printerColumns,
        },
      ],
    },
  };
}

/** File name under deploy/crds. */
export function crdFileName(k: KindSchema): string {
  return `${k.plural}.${GROUP}.yaml`;
}
