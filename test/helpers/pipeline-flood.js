// A flooding client of its own process: `connections` connections to 127.0.0.1:`port`, spread over
// the local addresses `from` (comma-separated), each writing `path`'s GET pipelined over and over as
// fast as it may, and reading nothing, until it is killed.
//
// Its own process, as an attacker is: in the test's process, the writes of hundreds of connections
// kept the test's event loop so busy that the other client's answers, read there too, waited seconds
// for it (an answer the service sent in under a second was read 11 s later on a loaded machine).
// Required, it lends the one connection's loop to the tests of a few connections in their own process.
const net = require('node:net');

/** A client connection from `from` that writes `requests` over and over as fast as it may, and reads nothing. */
function pipeliner(port, requests, from) {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
  socket.on('error', () => undefined);
  socket.pause();
  const write = () => {
    while (socket.writable && socket.write(requests));
  };
  socket.on('drain', write);
  socket.once('connect', write);
  return socket;
}

if (require.main === module) {
  const [port, connections, from, path] = process.argv.slice(2);
  const addresses = from.split(',');
  const flood = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: school.example\r\n\r\n`.repeat(200));
  for (let i = 0; i < Number(connections); i += 1) pipeliner(Number(port), flood, addresses[i % addresses.length]);
}
module.exports = { pipeliner };
