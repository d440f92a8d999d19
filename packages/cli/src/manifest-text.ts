// The shape of an embedded manifest: shared by manifests.generated.ts (written by tools/manifests)
// and manifests.ts (claimctl manifests), so neither imports the other's module for it.

/** One file of deploy/<component>/, as text. */
export interface ManifestText {
  file: string;
  yaml: string;
}
