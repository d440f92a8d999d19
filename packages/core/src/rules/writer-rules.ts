// What claimkit's own writers keep to (DESIGN.md "Where each rule is enforced", layer 1): the rule
// under all the others, enforced by core alone.
import { inCore, type Rule } from './places.ts';

export const WRITER_RULES: readonly Rule[] = [
  {
    id: 'own-writes-fenced',
    statement:
      'writes by claimkit itself: resourceVersion/UID preconditions, fenced terminal writes (`ClaimSuperseded`)',
    places: [
      inCore(
        'api/decision.ts',
        ['precondition?: PatchOptions', 'preconditions?: DeletePreconditions'],
        "a decision's writes carry their preconditions",
      ),
      inCore(
        'capture/claim.ts',
        ['class ClaimSuperseded'],
        'a terminal write with a token that is no longer current is refused',
      ),
    ],
  },
];
