// The simulated failures in the tests are logged by the server; keep the test output readable.
import { configureLog } from '../src/basics/log';
import { loadConfig } from '../src/config';

configureLog(loadConfig());
