// The postgres project of jest.config.js: the same suites, over PostgreSQL.
process.env.TEST_STORE = 'postgres';
