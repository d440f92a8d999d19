// A manifest file of a component (deploy/policies, deploy/controller, deploy/webhook) as data: its
// objects plus a comment. The builders return these; tools/manifests renders and writes them.
export interface ManifestFile {
  file: string;
  comment: string;
  objects: Record<string, unknown>[];
}
