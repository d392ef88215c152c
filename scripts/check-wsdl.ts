import '../src/basics/supported-node';
import fs from 'node:fs';
import path from 'node:path';
import { CHECKED_WSDL_FILE, checkedAddress, checkKey, readAgainstContract } from '../src/bindings/soap/node-soap';
import { type CommandSpec, parseCommandLine } from '../src/basics/command-line';
import { loadConfig } from '../src/config';
import { ENDPOINTS } from '../src/contract/operations';
import { WsdlCatalog } from '../src/pages/wsdl';
import { runMain } from './run-main';

/**
 * Run by scripts/build.js on the build it has just compiled: node-soap reads each WSDL as the
 * service serves it with the default settings, and each must be the contract (a WSDL that parts
 * from it fails the build, naming the operation). What passed is written to the build's root, so
 * that a start with those WSDLs does not load node-soap to read them again (bindings/soap/node-soap.ts).
 */
const COMMAND = {
  usage: ['node scripts/check-wsdl.js BUILD_DIR   (scripts/build.js runs it)'],
  summary: [
    `node-soap reads wsdl/*.wsdl as served by default and holds each to the contract; what passed is written to BUILD_DIR/${CHECKED_WSDL_FILE}.`,
  ],
  options: {},
  positionals: ['BUILD_DIR'],
  notes: ['exit codes: 0 every WSDL is the contract, 1 one is not (said in one line), 2 usage'],
} as const satisfies CommandSpec;

runMain(async (argv) => {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  // The settings' defaults, not this machine's environment: a build is the same wherever it runs.
  const config = loadConfig({});
  const catalog = new WsdlCatalog(config.xmlNamespace, undefined, config.protocols);
  const checked: string[] = [];
  for (const endpoint of ENDPOINTS) {
    const wsdl = catalog.text(endpoint.name, checkedAddress(endpoint.name));
    try {
      await readAgainstContract(wsdl, endpoint);
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      return 1;
    }
    checked.push(checkKey(wsdl, endpoint));
  }
  fs.writeFileSync(path.join(line.positionals[0]!, CHECKED_WSDL_FILE), `${JSON.stringify({ checked }, null, 2)}\n`);
  return 0;
});
