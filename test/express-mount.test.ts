import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { studentInfoRouter, type StudentInfoRouter } from '../src/process/mount';
import { createTestApp, type TestApp } from './helpers/app';
import { EXCHANGES, expectRecordedAnswer, HOST, sendExchange } from './helpers/exchanges';
import { MAIN } from './helpers/service';

/**
 * The service mounted into an Express app (src/process/mount.ts): the contract exchanges answered through
 * the mount as `npm start` answers them, the mount path in every address, and what a host app can
 * get wrong (a body parser ahead of the mount, a pattern for a path, a store that will not open)
 * answered without hanging or ending anything. test/express-mount-bytes.test.ts compares every
 * byte with `npm start`'s listener.
 */

const env = { LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' };
const MOUNT = '/StudentService';

let t: TestApp;
let router: StudentInfoRouter;
let host: express.Express;
beforeAll(async () => {
  t = await createTestApp();
  router = studentInfoRouter({ env, store: t.store });
  host = express();
  // A host's own middleware ahead of the mount: its headers stay, its Express X-Powered-By goes.
  host.use((_req, res, next) => {
    res.setHeader('X-Host', 'kept');
    next();
  });
  host.use(MOUNT, router);
  host.get('/health', (_req, res) => void res.send('host ok'));
  await router.ready;
});
afterAll(async () => {
  await router.close();
  await t.close();
});

describe.each(EXCHANGES.map((x) => [x.id, x] as const))('through the mount: %s', (_id, x) => {
  test('matches the legacy answer, under the mount path', async () => {
    expectRecordedAnswer(await sendExchange(host, x, MOUNT), x, `http://${HOST}${MOUNT}`);
  });
});

test('the WSDL and discovery addresses carry the mount path as the client spelled it', async () => {
  const wsdl = await request(host).get('/studentservice/PushNotificationMobile.asmx?wsdl').set('Host', HOST);
  expect(wsdl.status).toBe(200);
  expect(wsdl.text).toContain(`location="http://${HOST}/studentservice/PushNotificationMobile.asmx"`);
  const disco = await request(host).get(`${MOUNT}/AboutUs.asmx?disco`).set('Host', HOST);
  expect(disco.text).toContain(`ref="http://${HOST}${MOUNT}/AboutUs.asmx?wsdl"`);
});

test("ASP.NET's error pages name the mount path as the application", async () => {
  const res = await request(host).get(`${MOUNT}/AboutUs.asmx/`);
  expect(res.status).toBe(500);
  expect(res.text).toContain(`Server Error in '${MOUNT}' Application.`);
  const missing = await request(host).get(`${MOUNT}/Nothing.asmx`);
  expect(missing.status).toBe(404);
  expect(missing.text).toContain(`Server Error in '${MOUNT}' Application.`);
  expect(missing.text).toContain(`<b> Requested URL: </b>${MOUNT}/Nothing.asmx<br><br>`);
});

test("the host's headers are kept, its X-Powered-By: Express is not, and its own routes still answer", async () => {
  const res = await request(host).get(`${MOUNT}/AboutUs.asmx/GetAboutUs`);
  expect(res.status).toBe(200);
  expect(res.headers['x-host']).toBe('kept');
  expect(res.headers['x-powered-by']).toBeUndefined();
  expect((await request(host).get('/health')).text).toBe('host ok');
  // Beside the mount, the host's X-Powered-By is the host's business.
  expect((await request(host).get('/health')).headers['x-powered-by']).toBe('Express');
});

test("a path under the mount that is no endpoint is IIS's 404, as under BASE_PATH; a method IIS keeps is IIS's", async () => {
  const res = await request(host).get(`${MOUNT}/nothing`);
  expect(res.status).toBe(404);
  expect(res.text).toContain('<h2>404 - File or directory not found.</h2>');
  const put = await request(host).delete(`${MOUNT}/AboutUs.asmx`);
  expect([put.status, put.headers.allow]).toEqual([405, 'GET, HEAD, OPTIONS, TRACE']);
  expect((await request(host).get(`${MOUNT}//PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001`)).text).toContain(
    'fcm:APA91bH-token-1001',
  );
});

test("a body parser ahead of the mount: the request that lost its body gets ASP.NET's generic answer at once, not a hang", async () => {
  const parsing = express();
  parsing.use(express.urlencoded({ extended: false }));
  const r = studentInfoRouter({ env, store: t.store });
  parsing.use(MOUNT, r);
  try {
    const started = Date.now();
    const post = await request(parsing)
      .post(`${MOUNT}/PushNotificationMobile.asmx/GetTokenDevice`)
      .type('form')
      .send('id=dev-1001')
      .timeout(5000);
    expect(post.status).toBe(500);
    expect(post.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(Date.now() - started).toBeLessThan(5000);
    // A body the parser leaves alone (SOAP's text/xml) is read by the service as ever.
    const soap = await request(parsing)
      .post(`${MOUNT}/PushNotificationMobile.asmx`)
      .set('Content-Type', 'text/xml; charset=utf-8')
      .set('SOAPAction', '"http://tempuri.org/GetTokenDevice"')
      .send(
        '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetTokenDevice xmlns="http://tempuri.org/"><id>dev-1001</id></GetTokenDevice></soap:Body></soap:Envelope>',
      );
    expect(soap.status).toBe(200);
    expect(soap.text).toMatch(/<GetTokenDeviceResult>[^<]+<\/GetTokenDeviceResult>/);
  } finally {
    await r.close();
  }
});

test("a store that cannot be opened: ready rejects, and requests get http.sys's 503 page", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-mount-'));
  // A file where the store's directory should be: nothing can be created under it.
  fs.writeFileSync(path.join(dir, 'blocked'), '');
  const r = studentInfoRouter({ env: { ...env, SQLITE_PATH: path.join(dir, 'blocked', 'store.db') } });
  const app = express().use(MOUNT, r);
  try {
    await expect(r.ready).rejects.toThrow();
    const res = await request(app).get(`${MOUNT}/AboutUs.asmx?wsdl`);
    expect(res.status).toBe(503);
    expect(res.text).toContain('HTTP Error 503. The service is unavailable.');
    await r.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a mount on a pattern, on two paths or through an express.Router, and shadowing, are refused', async () => {
  const pattern = studentInfoRouter({ env, store: t.store });
  const twice = studentInfoRouter({ env, store: t.store });
  try {
    expect(() => express().use('/t/:tenant', pattern)).toThrow(/fixed path/);
    const app = express().use('/a', twice);
    expect(() => app.use('/b', twice)).toThrow(/mounted once/);
  } finally {
    await Promise.all([pattern.close(), twice.close()]);
  }
  // Through an express.Router no mount event says where it is: refused with the 503 page, not guessed.
  const nested = studentInfoRouter({ env, store: t.store });
  try {
    const api = express.Router();
    api.use('/svc', nested);
    const res = await request(express().use('/api', api)).get('/api/svc/AboutUs.asmx?wsdl');
    expect(res.status).toBe(503);
  } finally {
    await nested.close();
  }
  expect(() => studentInfoRouter({ env: { ...env, SHADOW_URL: 'http://legacy.example/' }, store: t.store })).toThrow(/SHADOW_URL/);
});

test('npm start does not load Express: the serving path is node http alone', () => {
  // main.js as the process tests build it, its imports all loaded, stopped at once by a bad setting;
  // a preloaded hook counts the Express modules loaded by then.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-mount-'));
  const hook = path.join(dir, 'count.js');
  fs.writeFileSync(
    hook,
    `process.on('exit', () => process.stdout.write(String(Object.keys(require.cache).filter((f) => /node_modules[\\\\/](express|body-parser|router)[\\\\/]/.test(f)).length) + ' of ' + Object.keys(require.cache).length));`,
  );
  try {
    const run = spawnSync(process.execPath, ['-r', hook, MAIN], { env: { ...process.env, PORT: 'not-a-port' }, encoding: 'utf8' });
    expect(run.stderr).toContain('PORT');
    const [express, all] = run.stdout.split(' of ').map(Number);
    expect(all).toBeGreaterThan(50);
    expect(express).toBe(0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
