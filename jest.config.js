// Quiet by default (test/setup-logs.ts applies it); LOG_LEVEL=info npm test shows the server's lines.
process.env.LOG_LEVEL ??= 'silent';

const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const net = require('node:net');
const os = require('node:os');
const { Client } = require('pg');

const common = {
  testEnvironment: 'node',
  // Each file is compiled on its own (isolatedModules, set in tsconfig.json); the global setup type-checks first.
  transform: { '^.+\\.ts$': 'ts-jest' },
  setupFiles: ['<rootDir>/test/setup-logs.ts', '<rootDir>/test/helpers/ts-loader-env.js'],
};

/**
 * The suites that exercise the service through a store run twice, once per store: this list is
 * the PostgreSQL half. A new suite that builds the app with test/helpers/app.ts belongs here.
 */
const BEHAVIOUR_SUITES = [
  'schema-compat',
  'exchanges',
  'soap',
  'http',
  'roundtrip',
  'legacy-matrix',
  'localhost',
  'store',
  'import',
  'postgres',
  'fidelity',
  'fuzz',
  'security',
  'failures',
  'sms',
  'sms-delivery',
  'sms-defaults',
  'sms-processes',
  'sms-limits',
  'outbox-group-commit',
  'shadow',
  'express-mount',
  'express-mount-bytes',
  'postgres-rosters',
  'ready',
  'shadow-totals',
  'shadow-sampling',
];

async function postgresReachable(url) {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return null;
  } catch (err) {
    return err.code || err.message;
  }
}

/** Null when a Redis answers PING at the URL, else why not. */
function redisReachable(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 6379) });
    const done = (why) => {
      socket.destroy();
      resolve(why);
    };
    socket.setTimeout(2000, () => done('timed out'));
    socket.on('error', (err) => done(err.code || err.message));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(data.toString().startsWith('+PONG') ? null : data.toString().trim()));
  });
}

/** Whether the node at `file` runs a line scripts/check-node.js refuses. */
function unsupportedNode(file) {
  if (!fs.existsSync(file)) return false;
  const r = spawnSync(file, ['--version'], { encoding: 'utf8' });
  return r.status === 0 && require('./scripts/check-node.js').refusal(r.stdout.trim().replace(/^v/, '')) !== null;
}

/** @returns {Promise<import('jest').Config>} */
module.exports = async () => {
  const url = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const projects = [
    {
      ...common,
      displayName: 'sqlite',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/test/postgres(-rosters)?\\.test\\.ts$'],
    },
  ];
  const why = await postgresReachable(url);
  if (why === null) {
    projects.push({
      ...common,
      displayName: 'postgres',
      testMatch: BEHAVIOUR_SUITES.map((name) => `<rootDir>/test/${name}.test.ts`),
      setupFiles: [...common.setupFiles, '<rootDir>/test/helpers/use-postgres.js'],
    });
  } else if (process.env.REQUIRE_POSTGRES === '1') {
    throw new Error(`PostgreSQL at ${url} cannot be reached (${why}) and REQUIRE_POSTGRES=1`);
  } else {
    process.stderr.write(
      `PostgreSQL at ${url} cannot be reached (${why}): the PostgreSQL half of the suite is SKIPPED (REQUIRE_POSTGRES=1 makes this an error)\n`,
    );
  }
  // The suites that need Redis read TEST_REDIS_URL (the workers inherit it); empty means skip them.
  const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
  const redisWhy = await redisReachable(redisUrl);
  if (redisWhy === null) {
    process.env.TEST_REDIS_URL = redisUrl;
  } else if (process.env.REQUIRE_REDIS === '1') {
    throw new Error(`Redis at ${redisUrl} cannot be reached (${redisWhy}) and REQUIRE_REDIS=1`);
  } else {
    process.env.TEST_REDIS_URL = '';
    process.stderr.write(
      `Redis at ${redisUrl} cannot be reached (${redisWhy}): the shared-limit and round-robin recipe tests are SKIPPED (REQUIRE_REDIS=1 makes this an error)\n`,
    );
  }
  // Said here, before the run: jest drops what a suite whose tests are all skipped writes to the console.
  const nginx = ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => fs.existsSync(p));
  process.env.TEST_NGINX = nginx ?? '';
  if (nginx === undefined && process.env.REQUIRE_NGINX !== '1') {
    process.stderr.write(
      'nginx is not installed: the deploy/nginx tests are SKIPPED (apt-get install nginx; REQUIRE_NGINX=1 makes this a failure)\n',
    );
  }
  // A Node.js line the service refuses, for the entry points' refusal (test/entry-points.test.ts): OLD_NODE
  // (CI installs Node 20 there), else a distribution's own node when it is one (Debian's is 20 or older).
  const oldNode = [process.env.OLD_NODE, '/usr/bin/node', '/usr/local/bin/node'].find((p) => p && unsupportedNode(p));
  process.env.TEST_OLD_NODE = oldNode ?? '';
  if (oldNode === undefined && process.env.REQUIRE_OLD_NODE !== '1') {
    process.stderr.write(
      "no unsupported Node.js found (OLD_NODE, /usr/bin/node): the entry points' refusal of an old Node is SKIPPED (REQUIRE_OLD_NODE=1 makes this a failure)\n",
    );
  }
  // The console's browser test drives Debian's chromium (CHROMIUM_PATH to use another).
  const chromium = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && fs.existsSync(p));
  process.env.TEST_CHROMIUM = chromium ?? '';
  if (chromium === undefined && process.env.REQUIRE_BROWSER !== '1') {
    process.stderr.write(
      'chromium is not installed: the console browser test is SKIPPED (apt-get install chromium; REQUIRE_BROWSER=1 makes this a failure)\n',
    );
  }
  // The alert rules and the dashboard's queries are run on Debian's Prometheus (prometheus and promtool).
  const prometheus = ['/usr/bin/prometheus', '/usr/local/bin/prometheus'].find((p) => fs.existsSync(p));
  const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => fs.existsSync(p));
  process.env.TEST_PROMETHEUS = prometheus !== undefined && promtool !== undefined ? prometheus : '';
  process.env.TEST_PROMTOOL = prometheus !== undefined && promtool !== undefined ? promtool : '';
  if (process.env.TEST_PROMETHEUS === '' && process.env.REQUIRE_PROMETHEUS !== '1') {
    process.stderr.write(
      'prometheus or promtool is not installed: the alert rules and dashboard test on a real Prometheus is SKIPPED (apt-get install prometheus; REQUIRE_PROMETHEUS=1 makes this a failure)\n',
    );
  }
  // The differential run (test/differential.test.ts) starts the legacy ASMX host: Debian's mono-devel (mcs and mono).
  const onPath = (name) => (process.env.PATH || '').split(':').some((dir) => dir !== '' && fs.existsSync(`${dir}/${name}`));
  process.env.TEST_LEGACY_HOST = onPath('mcs') && onPath('mono') ? '1' : '';
  if (process.env.TEST_LEGACY_HOST === '' && process.env.REQUIRE_LEGACY_HOST !== '1') {
    process.stderr.write(
      'mono-devel is not installed: the differential run against the legacy host is SKIPPED (apt-get install mono-devel; REQUIRE_LEGACY_HOST=1 makes this a failure)\n',
    );
  }
  return {
    projects,
    // Most suites wait on the processes they start (the service, nginx, the legacy host) and on
    // timers more than they compute: two workers more than there are processors keep them busy
    // (on 2 cores: 2 workers left them 145% of 200% busy; 3 took the run from 407 s to 318 s; after
    // the service's start was halved, 4 took it from 412 s to 357 s, with 640 s of CPU).
    maxWorkers: Math.min(os.availableParallelism() + 2, 8),
    // A time-out fails a hang; it times nothing. A test's own work (an import of 80,000 rows, a
    // process started and stopped) takes several times its quiet duration on a machine this run keeps
    // busy, so the limit is far above any test's duration on a loaded 2-core machine.
    testTimeout: 60000,
    // One build of the service for the suites that run it as a process (test/helpers/service.ts).
    globalSetup: '<rootDir>/test/helpers/global-setup.ts',
    globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  };
};
