// The service the tests build in-process runs from its TypeScript sources, and so does the shadow
// copier it starts: this names the loader that copier's node requires first (src/shadow/mirror.ts).
process.env.ASMX_TS_LOADER = require('node:path').join(__dirname, 'ts-register.js');
