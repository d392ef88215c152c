/**
 * The stand-in legacy host of the shadow comparison (shadow.ts): it answers each copy with the bytes
 * the service gave for that request (recorded as the ceiling's are), so every copy is sent, read and
 * compared in full, and matches.
 *
 * A real legacy host runs on a machine of its own and costs the service's machine nothing; this one
 * shares the service's CPUs, so it does as little as it can: no HTTP server, only where a request
 * ends and an answer prebuilt as bytes. Node's http server in its place (the ceiling) took about
 * 17 µs of CPU a copy on a 2-core machine, this 9 µs: the one CPU cost in the comparison that a
 * deployment does not have.
 *
 *   node .dev-build/scripts/bench/stand-in.js ANSWERS.json     (PORT from the environment)
 */
import '../../src/basics/supported-node';
import fs from 'node:fs';
import net from 'node:net';
import { answerEnd, type RecordedAnswer, requestKey } from './ceiling';
import { type CommandSpec, parseCommandLine } from '../../src/basics/command-line';

const NOT_FOUND = Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n', 'latin1');

/** The recorded answer as it goes out: its status line and headers as recorded, kept alive as node's server would. */
function answerBytes(a: RecordedAnswer): Buffer {
  let head = `HTTP/1.1 ${a.status} ${a.reason}\r\n`;
  for (const [name, value] of a.headers) head += `${name}: ${value}\r\n`;
  head += `Connection: keep-alive\r\nKeep-Alive: timeout=${a.keepAliveSeconds ?? 5}\r\n\r\n`;
  return Buffer.from(head + a.body, 'latin1');
}

export function createStandIn(answers: readonly RecordedAnswer[]): net.Server {
  const byKey = new Map(answers.map((a) => [a.key, answerBytes(a)]));
  return net.createServer((socket) => {
    socket.setNoDelay(true);
    let got: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      got = got.length === 0 ? chunk : Buffer.concat([got, chunk]);
      // Every whole request in what has come, answered in order (a client may send the next early).
      // A request is framed as an answer is (its head, then its Content-Length).
      for (let request = answerEnd(got); request !== null; request = answerEnd(got)) {
        const { head, end } = request;
        const [method = '', path = ''] = head.slice(0, head.indexOf('\r\n')).split(' ');
        socket.write(byKey.get(requestKey(method, path, got.toString('utf8', head.length + 4, end))) ?? NOT_FOUND);
        got = got.subarray(end);
      }
    });
    // A copier gone mid-answer: nothing to tell anyone.
    socket.on('error', () => socket.destroy());
  });
}

/** Started by the benchmark (shadow.ts), not by hand. */
const COMMAND = {
  usage: ['PORT=N node .dev-build/scripts/bench/stand-in.js ANSWERS.json'],
  summary: ["The shadow benchmark's stand-in legacy host: each copy answered with the recorded answer's bytes, on 127.0.0.1:PORT."],
  options: {},
  positionals: ['ANSWERS.json'],
} as const satisfies CommandSpec;

if (require.main === module) {
  const line = parseCommandLine(COMMAND, process.argv.slice(2));
  if (typeof line === 'number') process.exitCode = line;
  else {
    const answers = JSON.parse(fs.readFileSync(line.positionals[0]!, 'utf8')) as RecordedAnswer[];
    createStandIn(answers).listen(Number(process.env.PORT), '127.0.0.1');
    process.on('SIGTERM', () => process.exit(0));
  }
}
