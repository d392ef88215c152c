import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type * as Soap from 'soap';
import type { EndpointSpec, ParamType } from '../../contract/operations';

/**
 * node-soap's part, through its public API only: it reads each hand-written WSDL as the clients'
 * generators read it (`soap.WSDL`, `describeServices()`), and what it finds there must be the
 * contract (contract/operations.ts): in every SOAP port, the endpoint's operations and no other, each
 * with the contract's parameters, in order, of the contract's types. A WSDL that parts from the
 * contract fails the start in one line naming the operation.
 *
 * The rest of SOAP is ours (index.ts and the readers beside it): routing in ASMX's order, reading
 * the envelope, calling the operation, and writing ASMX's envelope and faults byte for byte. node-soap
 * did that dispatch through three private members, one more XML parse and a walk of the WSDL's ports
 * per request, to write answers we then had to replace; test/node-soap-public.test.ts holds what this
 * file relies on to every version of soap the package allows.
 */

/** How node-soap's description writes each of the contract's types (`s:` is the XML Schema prefix the WSDLs use). */
const DESCRIBED: Readonly<Record<ParamType, string>> = { string: 's:string', char: 'char|s:unsignedShort' };

/** Each SOAP port's operations and their parameters, as node-soap describes the WSDL. */
type Described = Record<string, Record<string, Record<string, { input?: Record<string, unknown> }>>>;

/** Reads `wsdl` with node-soap (rejects what node-soap cannot read). */
export function describeWsdl(wsdl: string, uri: string): Promise<Described> {
  const soap = require('soap') as typeof Soap;
  return new Promise((resolve, reject) => {
    const reader = new soap.WSDL(wsdl, uri, {});
    reader.onReady((err) => (err ? reject(err) : resolve(reader.describeServices() as Described)));
  });
}

/** Where `wsdl` parts from the contract's `endpoint`, one line each; none when they agree. */
export function contractMismatches(described: Described, endpoint: EndpointSpec): string[] {
  const problems: string[] = [];
  // With both SOAP protocols off (PROTOCOLS), the WSDL has no SOAP port to check.
  const ports = Object.entries(described[endpoint.name] ?? {});
  for (const [port, operations] of ports) {
    const expected = endpoint.operations.map((op) => op.name);
    for (const name of Object.keys(operations))
      if (!expected.includes(name)) problems.push(`${port}: operation ${name} is not the contract's`);
    for (const op of endpoint.operations) {
      const found = operations[op.name];
      if (found === undefined) {
        problems.push(`${port}: operation ${op.name} is missing`);
        continue;
      }
      const params = Object.entries(found.input ?? {}).filter(([name]) => name !== 'targetNSAlias' && name !== 'targetNamespace');
      const want = op.params.map((p) => `${p.name}: ${DESCRIBED[p.type]}`).join(', ');
      const got = params.map(([name, type]) => `${name}: ${String(type)}`).join(', ');
      if (got !== want) problems.push(`${port}: operation ${op.name} takes (${got}) where the contract says (${want})`);
    }
  }
  return problems;
}

/**
 * What scripts/build.js writes at the build's root (scripts/check-wsdl.ts): the WSDLs node-soap read
 * and found to be the contract when the build ran, as `checkKey`s. Loading node-soap and reading the
 * five WSDLs is 260 ms of processor time, a third of a start (and of each cluster worker's); a start
 * whose WSDLs are those the build checked, by the same soap and the same contract, reads none again.
 */
export const CHECKED_WSDL_FILE = 'wsdl-checked.json';

/** The address the WSDL text held to the contract has (any would do; one, so that the build's record is found). */
export const checkedAddress = (endpoint: string): string => `http://localhost/${endpoint}.asmx`;

/** What a check depends on: node-soap's version, the endpoint's contract and the WSDL's text. */
export function checkKey(wsdl: string, endpoint: EndpointSpec): string {
  const soapVersion = (require('soap/package.json') as { version: string }).version;
  return createHash('sha256')
    .update(JSON.stringify([soapVersion, endpoint, wsdl]))
    .digest('hex');
}

let checkedByBuild: ReadonlySet<string> | undefined;

/** The build's record (none when run from the sources, or from a build without one). */
function checkedKeys(): ReadonlySet<string> {
  if (checkedByBuild === undefined) {
    try {
      const file = path.join(__dirname, '..', '..', '..', CHECKED_WSDL_FILE);
      checkedByBuild = new Set((JSON.parse(fs.readFileSync(file, 'utf8')) as { checked: string[] }).checked);
    } catch {
      checkedByBuild = new Set();
    }
  }
  return checkedByBuild;
}

/**
 * Refuses to go on with a WSDL that parts from the contract: the error names the operation. A WSDL
 * the build checked is not read again (another XML_NAMESPACE or PROTOCOLS, or a WSDL file edited
 * since the build, is).
 */
export async function checkWsdl(wsdl: string, endpoint: EndpointSpec, checked = checkedKeys()): Promise<void> {
  if (!checked.has(checkKey(wsdl, endpoint))) await readAgainstContract(wsdl, endpoint);
}

/** node-soap reads `wsdl`, and it must be the contract: what the build records, and a start does for a WSDL not recorded. */
export async function readAgainstContract(wsdl: string, endpoint: EndpointSpec): Promise<void> {
  const problems = contractMismatches(await describeWsdl(wsdl, checkedAddress(endpoint.name)), endpoint);
  if (problems.length > 0) throw new Error(`wsdl/${endpoint.name}.wsdl does not match the contract: ${problems.join('; ')}`);
}
