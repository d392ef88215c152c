import { isSoap, type Rule } from './rules';

/**
 * TEMPORARY, both lists in this file. OPEN_RULES: rules that another branch is fixing in the service
 * (none now: issue 39's branches are merged, and what they decided to answer as .NET and IIS do is in
 * scripts/legacy/accepted-generated.ts); NEW_FINDINGS (below): differences the run found that no
 * branch has yet. Each is a difference the run finds today, ours to fix (or to prove Mono's and move
 * to accepted-generated.ts). When a fix is merged its entry goes: the report names the temporary
 * rules no difference needed, and a difference left after a rule is gone fails the run.
 */

export const OPEN_RULES: Rule[] = [];

/**
 * TEMPORARY: differences the differential run found that no branch is fixing yet (reported with
 * issue 39's run; each has a minimal reproduction in the report). Listed so that the run passes
 * while they wait for a decision, clearly apart from Mono's own: each is ours to fix or to prove Mono's.
 */
const NEW = 'found by the differential run (issue 39); no branch yet';

export const NEW_FINDINGS: Rule[] = [
  {
    name: 'soap-malformed-late-order',
    features: ['soap:malformed-late'],
    applies: isSoap,
    reason:
      'XML the reader refuses late (an element name that is not a name, a comment after text in a value, text after the root, a cut end) after a parameter that may not convert: the hosts disagree on which comes first, either way (L that parameter\'s fault, P 400; or, a char or number written in fullwidth digits, L 400, P the conversion fault): which value each converts, and when, to be read from XmlSerializationReader',
    evidence: NEW,
  },
];
