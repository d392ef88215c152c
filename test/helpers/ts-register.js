// Lets a plain `node` child process of a test load the TypeScript sources, as jest's ts-jest does in
// the test itself: each .ts file is transpiled (no type check) with the project's settings on require.
const fs = require('node:fs');
const ts = require('typescript');

const compilerOptions = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true };

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};
