// Quiet by default (test/setup-logs.ts applies it); LOG_LEVEL=info npm test shows the server's lines.
process.env.LOG_LEVEL ??= 'silent';

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  testTimeout: 20000,
  setupFiles: ['<rootDir>/test/setup-logs.ts'],
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
};
