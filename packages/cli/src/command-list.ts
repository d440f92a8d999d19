// claimctl's commands as help lists them; the completion scripts complete the same list.

/** The commands in help order: what `--help` lists and what the completion scripts complete. */
export const COMMAND_SUMMARY: readonly { name: string; args: string; summary: string }[] = [
  {
    name: 'get',
    args: 'TYPE [NAME...]',
    summary: 'list captures (cap), podpools (pool), podclaims (pc), podclaimsets (pcs)',
  },
  { name: 'describe', args: 'TYPE [NAME...]', summary: 'details with conditions and recent Events' },
  {
    name: 'doctor',
    args: '[--fix [--dry-run]]',
    summary: 'find (and repair) stuck finalizers, residue labels, lost pods, dead holders',
  },
  {
    name: 'capture',
    args: 'OP NAME',
    summary: 'acquire|renew|complete|fail|release|retry a Capture (External backend)',
  },
  {
    name: 'claim',
    args: 'OP NAME',
    summary: 'create (--wait: and print where its pod is)|wait|release|migrate a PodClaim',
  },
  { name: 'simulate', args: '', summary: "run core's deterministic simulator against the invariants" },
  { name: 'manifests', args: '', summary: 'print deployable YAML (crds, policies, controller, webhook)' },
  { name: 'completion', args: 'bash|zsh', summary: 'print a shell completion script' },
  { name: 'version', args: '', summary: 'print the version' },
];
