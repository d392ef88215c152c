import path from 'node:path';
import { projectRoot } from './paths';

/**
 * The first import of every entry point: src/main.ts (which the cluster's workers run too), the
 * shadow copier and each command of scripts/. On a Node.js line the service does not support it
 * stops the process here, before any other module is loaded, with scripts/check-node.js's one line
 * and exit 1: better-sqlite3 on Node 20 is a segmentation fault with no output at all, which under a
 * supervisor's restarts is a silent crash loop. The rule stays in check-node.js, the plain JavaScript
 * that `npm ci` and `npm start` run too; it is shipped beside dist/ (package.json's `files`).
 */
require(path.join(projectRoot, 'scripts', 'check-node.js'));
