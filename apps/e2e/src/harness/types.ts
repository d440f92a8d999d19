export type ProviderName = 'local' | 'kind' | 'kubeconfig';

/** What every provider hands to the suites. */
export interface ClusterHandle {
  provider: ProviderName;
  /** Cluster-admin kubeconfig. */
  kubeconfigPath: string;
  /** A separate, authenticated identity with no RBAC bindings (tests grant what they need). */
  userKubeconfigPath: string;
  /** The user name the API server sees for userKubeconfigPath (for RoleBinding subjects). */
  userName: string;
  server: string;
  stop(): Promise<void>;
}
