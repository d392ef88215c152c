// The simulated failures in the tests are logged by the server; keep the test output readable.
process.env.LOG_LEVEL ??= 'silent';

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  testTimeout: 20000,
};
