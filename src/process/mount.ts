import type http from 'node:http';
import express, { type Express } from 'express';
import { createApp } from '../app';
import { send } from '../bindings/send';
import { type Config, ConfigError, loadConfig } from '../config';
import type { Env } from '../config/parse';
import { HostErrors } from '../basics/errors';
import { log, configureLog } from '../basics/log';
import { createSms, type Sms } from '../sms';
import { openStore } from '../store/open';
import type { Store } from '../store/store';
import type { Response } from '../transport/types';

/**
 * The service inside an existing Express app: `app.use('/StudentService', studentInfoRouter())`
 * answers as `npm start` with BASE_PATH=/StudentService does, byte for byte. The mount path is the
 * base path: WSDL and discovery addresses, help pages and ASP.NET's error page carry it.
 *
 * The request is handed to the same request listener `npm start` serves, with its URL as the client
 * sent it; Express only chooses which requests come here. No body parser runs: ASMX reads the raw
 * bytes itself (their charset, compression and size limit decide the answer). `npm start` loads
 * none of this: Express stays off its request path.
 */

export interface MountOptions {
  /** Settings as `npm start` reads them (docs/express.md lists those a mount ignores); process.env by default. */
  env?: Env;
  /** A store already open, left open by close(); by default one is opened (and migrated) from SQLITE_PATH or DATABASE_URL. */
  store?: Store;
}

export interface StudentInfoRouter extends Express {
  /** Settles once the store is open and the SMS side started; rejects with why not. Requests wait for it anyway. */
  readonly ready: Promise<void>;
  /** Stops SMS delivery (sends in flight finish) and closes the store it opened. Close the HTTP server first. */
  close(): Promise<void>;
}

interface Started {
  store: Store;
  sms: Sms;
  owned: boolean;
}

export function studentInfoRouter(options: MountOptions = {}): StudentInfoRouter {
  const env = options.env ?? process.env;
  // Validated at once: a bad setting fails the host's start, not its first request.
  const config = loadConfig(env);
  if (config.shadow !== null) {
    throw new ConfigError(
      "SHADOW_URL: shadow traffic needs the service's own listener (npm start); it is not available in an Express mount",
    );
  }
  configureLog(config);

  const started: Promise<Started> = (async () => {
    const store = options.store ?? (await openStore(config));
    const sms = createSms(config.sms, store);
    sms.start();
    return { store, sms, owned: options.store === undefined };
  })();
  const ready = started.then(() => undefined);
  // Whoever awaits `ready` sees the failure; nobody awaiting it must not end the host's process.
  ready.catch((error: unknown) => log.error('the Express mount could not start', { error }));

  // One listener per base path (normally one): the WSDL, pages and routes are built for it.
  const listeners = new Map<string, Promise<http.RequestListener>>();
  const listenerFor = (basePath: string): Promise<http.RequestListener> => {
    let listener = listeners.get(basePath);
    if (listener === undefined) {
      listener = started.then(({ store, sms }) => createApp(withBase(config, env, basePath), store, { intake: sms.intake }));
      listener.catch((error: unknown) => log.error('the Express mount could not build its routes', { error, basePath }));
      listeners.set(basePath, listener);
    }
    return listener;
  };

  const router = express() as StudentInfoRouter;
  router.disable('x-powered-by');
  let mounted = false;
  let misplaced = false;
  router.on('mount', () => {
    if (typeof router.mountpath !== 'string' || /[:*?(){}[\]+!]/.test(router.mountpath)) {
      throw new TypeError(`studentInfoRouter must be mounted on a fixed path such as '/StudentService', not ${String(router.mountpath)}`);
    }
    if (mounted) throw new TypeError('studentInfoRouter is mounted once; make another for another path');
    mounted = true;
  });

  router.use((req, res) => {
    // The host app's default X-Powered-By says Express; npm start's answers carry no such header.
    if (res.getHeader('X-Powered-By') === 'Express') res.removeHeader('X-Powered-By');
    // The service routes, and writes its addresses, from the URL as the client sent it.
    req.url = req.originalUrl;
    let base: string;
    try {
      base = mountPath(router);
      // Reached through a path the apps above do not name (an express.Router in between): its base is unknown.
      if (req.baseUrl.toLowerCase() !== base.toLowerCase())
        throw new TypeError(
          `studentInfoRouter was reached under ${req.baseUrl}: mount it with app.use(path, router) on an Express app, not through an express.Router`,
        );
    } catch (error) {
      if (!misplaced) log.error('the Express mount could not route', { error });
      misplaced = true;
      return unavailable(res);
    }
    listenerFor(base).then(
      (serve) => serve(req, res),
      () => unavailable(res),
    );
  });

  return Object.assign(router, {
    ready,
    close: async () => {
      // A start that failed left nothing open.
      const open = await started.catch(() => null);
      if (open === null) return;
      await open.sms.close();
      if (open.owned) await open.store.close();
    },
  });
}

/** The settings with the mount path as BASE_PATH, validated as BASE_PATH is. */
function withBase(config: Config, env: Env, basePath: string): Config {
  return { ...config, basePath: loadConfig({ ...env, BASE_PATH: basePath }).basePath };
}

type Mounted = Express & { parent?: Mounted };

/** Where the router sits, through every app it is nested in: its mount paths joined. */
function mountPath(app: Express): string {
  let path = '';
  for (let a: Mounted = app; a.parent !== undefined; a = a.parent) {
    if (typeof a.mountpath !== 'string')
      throw new TypeError(`an app above studentInfoRouter is mounted on ${String(a.mountpath)}, not a fixed path`);
    path = a.mountpath.replace(/\/+$/, '') + path;
  }
  return path;
}

/** What http.sys answers while the application behind it cannot run. */
function unavailable(res: Response): void {
  const error = HostErrors.unavailable();
  send(res, error.status, { 'Content-Type': error.contentType }, error.body);
}
