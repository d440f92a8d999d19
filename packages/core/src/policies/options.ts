// Who the controller is, and where the policies apply: the options every policy builder takes.
// The controller's identity is written into the policies as CEL list literals (the variables
// `controllerUsernames` and `controllerGroups`), so a policy needs no parameter object and is
// enforced from the moment it exists; the Helm chart fills the same two variables from values.
import { CONTROLLER_NAME, SYSTEM_NAMESPACE } from '../api/constants.ts';
import type { LabelSelector } from '../api/meta.ts';

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

export const DEFAULT_CONTROLLER_SERVICE_ACCOUNT: ServiceAccountRef = {
  namespace: SYSTEM_NAMESPACE,
  name: CONTROLLER_NAME,
};

export interface PolicyOptions {
  /** The ServiceAccount the controller runs as. Default claimkit-system/claimkit-controller. */
  controllerServiceAccount?: ServiceAccountRef;
  /** More usernames with the controller's right (e.g. a controller running outside the cluster). */
  controllerUsers?: readonly string[];
  /** Groups whose members have the controller's right. */
  controllerGroups?: readonly string[];
  /** Object names are `<namePrefix>-<policy>`. Default `claimkit`. */
  namePrefix?: string;
  /** Limits the bindings to these namespaces (default: every namespace). */
  namespaceSelector?: LabelSelector;
}

export class PolicyOptionsError extends Error {
  override readonly name = 'PolicyOptionsError';
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The username the API server gives a ServiceAccount's tokens. */
export function serviceAccountUsername(sa: ServiceAccountRef): string {
  if (!DNS_LABEL.test(sa.namespace)) {
    throw new PolicyOptionsError(
      `the controller ServiceAccount namespace ${JSON.stringify(sa.namespace)} is not a valid namespace name`,
    );
  }
  if (!DNS_SUBDOMAIN.test(sa.name)) {
    throw new PolicyOptionsError(
      `the controller ServiceAccount name ${JSON.stringify(sa.name)} is not a valid ServiceAccount name`,
    );
  }
  return `system:serviceaccount:${sa.namespace}:${sa.name}`;
}

/** The default controller username (the webhook's default `--controller-users` too). */
export const DEFAULT_CONTROLLER_USERNAME = serviceAccountUsername(DEFAULT_CONTROLLER_SERVICE_ACCOUNT);

export interface ResolvedPolicyOptions {
  controllerUsernames: string[];
  controllerGroups: string[];
  namePrefix: string;
  namespaceSelector?: LabelSelector;
}

function names(what: string, list: readonly string[] | undefined): string[] {
  const out = [...(list ?? [])];
  for (const s of out) {
    if (typeof s !== 'string' || s.trim() === '') {
      throw new PolicyOptionsError(`${what} must be non-empty strings, got ${JSON.stringify(s)}`);
    }
    if (!s.isWellFormed()) throw new PolicyOptionsError(`${what}: ${JSON.stringify(s)} is not valid Unicode`);
  }
  return out;
}

export function resolvePolicyOptions(o: PolicyOptions = {}): ResolvedPolicyOptions {
  const namePrefix = o.namePrefix ?? 'claimkit';
  // The longest suffix is `-podclaim-writers`; object names are DNS subdomains.
  if (!DNS_SUBDOMAIN.test(namePrefix) || namePrefix.length > 200) {
    throw new PolicyOptionsError(
      `namePrefix ${JSON.stringify(namePrefix)} is not a valid object name prefix`,
    );
  }
  const sa = serviceAccountUsername(o.controllerServiceAccount ?? DEFAULT_CONTROLLER_SERVICE_ACCOUNT);
  const users = names('controllerUsers', o.controllerUsers);
  return {
    controllerUsernames: [sa, ...users.filter((u) => u !== sa)],
    controllerGroups: names('controllerGroups', o.controllerGroups),
    namePrefix,
    ...(o.namespaceSelector ? { namespaceSelector: o.namespaceSelector } : {}),
  };
}

/**
 * A CEL list literal of strings, written as JSON (CEL reads JSON string escapes \" \\ \b \f \n \r
 * \t \uXXXX the same), which is also what Helm's `toJson` writes for the chart's values.
 */
export function celStringList(values: readonly string[]): string {
  return JSON.stringify(values);
}

/** A single-quoted CEL string literal (reads better inside YAML's double quotes). */
export function celString(s: string): string {
  return `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}
