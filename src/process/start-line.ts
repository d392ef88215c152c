import path from 'node:path';
import { rangeText } from '../basics/address';
import { buildText } from '../basics/build-info';
import { type Config, DEFAULT_CONNECTION_LIMIT_EXEMPT } from '../config';
import { ENDPOINTS } from '../contract/operations';
import { redactUrl } from '../store/redact';
import type { RowCounts } from '../store/store';

/**
 * The line logged once the service listens: which build, where to open it, what it serves from, and
 * what to do when there is nothing to serve yet.
 */
export function startLine(config: Config, port: number, counts: RowCounts, workers: number): string {
  const wildcard = config.host === '0.0.0.0' || config.host === '::';
  const host = wildcard ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const open = `http://${host}:${port}${config.basePath}/${ENDPOINTS[0]!.name}.asmx`;
  const store = config.databaseUrl !== null ? `PostgreSQL ${redactUrl(config.databaseUrl)}` : `SQLite ${path.resolve(config.sqlitePath)}`;
  const rows = `${counts.students} students, ${counts.devices} devices`;
  const processes = workers > 1 ? ` in ${workers} worker processes` : '';
  const hint =
    counts.students + counts.devices === 0
      ? '; the store is empty: load it with `npm run import -- --students FILE.csv --devices FILE.csv` (or --demo)'
      : '';
  return `listening on ${config.host}:${port}${processes}; version ${buildText()}; open ${open}; store ${store}: ${rows}${hint}${shadowPart(config)}${exemptPart(config)}${settingsPart(config)}`;
}

/**
 * Which settings the environment (or .env) gave, by name only (a value may be a secret): a setting
 * missing here is at its default, however sure the operator is of having set it.
 */
function settingsPart({ settingsRead }: Config): string {
  return settingsRead.length === 0 ? '; every setting at its default' : `; settings read: ${settingsRead.join(', ')}`;
}

function shadowPart({ shadow }: Config): string {
  if (shadow === null) return '';
  const how =
    shadow.mode === 'service-first'
      ? `answering clients, copies to the legacy host ${shadow.url}`
      : `clients answered by the legacy host ${shadow.url}, copies to this service`;
  const kept = shadow.log === null ? 'differences counted only' : `differences to ${path.resolve(shadow.log)}`;
  return `; shadow ${shadow.mode}: ${how}; ${kept}`;
}

/** Said at start because an exemption is a hole in a limit: the operator sees exactly whose. */
function exemptPart({ sms, connections }: Config): string {
  const smsPart =
    sms.limitExempt.length === 0
      ? ''
      : `; SMS per-address limit not applied to ${sms.limitExempt.map(rangeText).join(', ')} (the per-phone limit and the global budgets still are)`;
  const exempt = connections.exempt.map(rangeText);
  // The default (a proxy on this machine) is no hole seen from the network: not repeated at every start.
  const named = connections.perAddress > 0 && exempt.length > 0 && exempt.join(',') !== DEFAULT_CONNECTION_LIMIT_EXEMPT;
  const connectionPart = named ? `; connections per address not capped for ${exempt.join(', ')}` : '';
  return smsPart + connectionPart;
}
