// The OpenAPI v3 subset Kubernetes accepts in a structural CRD schema, as plain data. The schemas in
// schema/ are the one source of truth: deploy/crds is generated from them, and the in-memory API
// model validates and defaults with them (validate.ts), so tests see what the real server enforces.

export type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

/** A CEL rule. The API server evaluates `rule`; core evaluates the same text (rules.ts, @bufbuild/cel). */
export interface ValidationRule {
  rule: string;
  message: string;
  /** CEL that yields the message (a string), evaluated with the rule's bindings when the rule fails. */
  messageExpression?: string;
  /** Relative JSON path (`.sourcePod`) the error is reported on, as `fieldPath` in the CRD. */
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

export interface JSONSchemaProps {
  type?: SchemaType;
  description?: string;
  format?: 'date-time' | 'int32' | 'int64';
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  required?: string[];
  items?: JSONSchemaProps;
  enum?: (string | number)[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  pattern?: string;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: ValidationRule[];
}

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** Everything one CRD says about a kind; `crd.ts` turns it into the CustomResourceDefinition. */
export interface KindSchema {
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  description: string;
  /** The whole object: apiVersion, kind, metadata, spec, status. */
  schema: JSONSchemaProps;
  printerColumns: PrinterColumn[];
  scale?: ScaleSubresource;
}
