// A flooding client of its own process: `connections` connections to 127.0.0.1:`port`, spread over
// the local addresses `from` (comma-separated), each writing `path`'s GET pipelined over and over as
// fast as it may, and reading nothing, until it is killed.
//
// Its own process, as an attacker is: in the test's process, the writes of hundreds of connections
// kept the test's event loop so busy that the other client's answers, read there too, waited seconds
// for it (an answer the service sent in under a second was read 11 s later on a loaded machine).
const net = require('node:net');

const [port, connections, from, path] = process.argv.slice(2);
const addresses = from.split(',');
const flood = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: school.example\r\n\r\n`.repeat(200));
for (let i = 0; i < Number(connections); i += 1) {
  const socket = net.connect({ port: Number(port), host: '127.0.0.1', localAddress: addresses[i % addresses.length] });
  socket.on('error', () => undefined);
  socket.pause();
  const write = () => {
    while (socket.writable && socket.write(flood));
  };
  socket.on('drain', write);
  socket.once('connect', write);
}
