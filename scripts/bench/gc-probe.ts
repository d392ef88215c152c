/**
 * The service, started by the soak with `node --expose-gc`, answering one question over its IPC
 * channel: the V8 heap in use right after a full garbage collection. Everything else is main.js.
 */
process.on('message', (m: unknown) => {
  if (m !== 'heap?') return;
  (globalThis as { gc?: () => void }).gc?.();
  process.send?.({ heapUsed: process.memoryUsage().heapUsed });
});
require('../../src/main');
