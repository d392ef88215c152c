import fs from 'node:fs';
import path from 'node:path';
import * as soap from 'soap';
import { createNodeSoapEndpoint } from '../src/bindings/soap/node-soap';
import { WsdlCatalog } from '../src/pages/wsdl';

/**
 * Pins the node-soap private parts that src/bindings/soap/node-soap.ts (and only it) relies on. When
 * a node-soap upgrade moves one, the test that fails says which: read node-soap's lib/server.js of
 * the new version and mend node-soap.ts before unpinning.
 */
const ROOT = path.join(__dirname, '..');
const pinned = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> })
  .dependencies.soap;
const installed = (JSON.parse(fs.readFileSync(require.resolve('soap/package.json'), 'utf8')) as { version: string }).version;

/** Fails with the name of what moved, whatever the assertion library would have said. */
function pin(ok: boolean, what: string): void {
  if (!ok) throw new Error(`node-soap ${installed}: ${what} (src/bindings/soap/node-soap.ts relies on it)`);
}

const wsdl = new WsdlCatalog('http://tempuri.org/').text('AuthCodeSending', 'http://localhost/AuthCodeSending.asmx');
/** What each probe saw: the operation's arguments and context, the fault's cause. */
interface Seen {
  args?: Record<string, unknown>;
  context?: object;
  thrown?: unknown;
}

function probe(seen: Seen, answer: (args: Record<string, unknown>) => string) {
  return createNodeSoapEndpoint<object>({
    name: 'AuthCodeSending',
    wsdl,
    operations: new Map([
      [
        'AuthCode',
        async (args, context) => {
          seen.args = args;
          seen.context = context;
          return answer(args);
        },
      ],
    ]),
    envelope: (body) => `<E>${body}</E>`,
    fault: (thrown) => {
      seen.thrown = thrown;
      return '<F/>';
    },
  });
}

test('node-soap is pinned to an exact version, and that version is the one installed', () => {
  pin(pinned !== undefined && /^\d+\.\d+\.\d+$/.test(pinned), `package.json pins soap exactly (it says "${pinned}")`);
  pin(installed === pinned, `package.json pins ${pinned} but ${installed} is installed`);
});

test('the Server methods node-soap.ts calls or replaces are still there', () => {
  const proto = soap.Server.prototype as unknown as Record<string, unknown>;
  pin(typeof soap.createServerless === 'function', 'soap.createServerless is gone');
  pin(typeof proto._executeMethod === 'function', 'Server.prototype._executeMethod (the dispatch) is gone');
  pin(
    (proto._executeMethod as (...a: unknown[]) => void).length >= 4,
    'Server.prototype._executeMethod no longer takes (options, req, res, callback)',
  );
  pin(typeof proto._envelope === 'function', 'Server.prototype._envelope (replaced with the ASMX envelope) is gone');
  pin(typeof proto._sendError === 'function', 'Server.prototype._sendError (replaced with the ASMX fault) is gone');
});

test("each operation's answer element is where node-soap.ts reads it in the parsed WSDL", async () => {
  const server = await new Promise<soap.Server>((resolve, reject) => {
    void soap.createServerless({
      path: '/AuthCodeSending.asmx',
      services: {},
      xml: wsdl,
      callback: (err: unknown, s: soap.Server) => (err ? reject(err) : resolve(s)),
    });
  });
  const parsed = (
    server as unknown as {
      wsdl?: {
        definitions?: {
          services?: Record<string, { ports?: Record<string, { binding?: { topElements?: Record<string, { outputName?: string }> } }> }>;
        };
      };
    }
  ).wsdl;
  const ports = parsed?.definitions?.services?.AuthCodeSending?.ports;
  pin(ports?.AuthCodeSendingSoap !== undefined, 'server.wsdl.definitions.services[service].ports[port] is gone');
  pin(
    ports?.AuthCodeSendingSoap?.binding?.topElements?.AuthCode?.outputName === 'AuthCodeResponse',
    "a port's binding.topElements[op].outputName is gone",
  );
});

test('a dispatch reaches the operation with its arguments as given and the caller context, and is answered through the envelope hook', async () => {
  const seen: Seen = {};
  const endpoint = await probe(seen, (args) => `<AuthCodeResponse>${String(args.code)}</AuthCodeResponse>`);
  const context = { request: 1 };
  const answer = await endpoint.call('AuthCode', { code: '  12 34  ', phone: null }, context);
  pin(
    seen.context === context,
    "the request handed to _executeMethod no longer reaches the operation as its fourth argument (the caller's context is lost)",
  );
  pin(
    seen.args?.code === '  12 34  ',
    `the arguments handed to _executeMethod no longer reach the operation as they are; it got ${JSON.stringify(seen.args?.code)}`,
  );
  pin(answer.statusCode === undefined, `a successful dispatch now answers with a status (${answer.statusCode})`);
  pin(
    answer.body === '<E><AuthCodeResponse>  12 34  </AuthCodeResponse></E>',
    `the answer is no longer the _envelope hook around the operation's { _xml } as written: ${answer.body}`,
  );
});

test('what an operation throws reaches the fault hook as thrown, answered with status 500', async () => {
  const seen: Seen = {};
  const failure = new Error('the operation failed');
  const endpoint = await probe(seen, () => {
    throw failure;
  });
  const answer = await endpoint.call('AuthCode', { code: '1', phone: '2' }, {});
  pin(seen.thrown === failure, 'a thrown { Fault } no longer reaches _sendError as that Fault');
  pin(
    answer.body === '<F/>' && answer.statusCode === 500,
    `a fault is no longer answered through the _sendError hook with 500: ${answer.statusCode} ${answer.body}`,
  );
});
