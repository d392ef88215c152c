import { type ChildProcess, spawn, spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';
import * as soap from 'soap';
import { freePort, PROJECT_ROOT, request, type Service, startService } from './helpers/service';

/**
 * The nginx recipes of deploy/nginx/, each file as shipped (only its ports substituted) run by Debian's
 * nginx on a non-default port in front of the service: the WSDL advertises nginx's address, answers
 * carry a Content-Length, SOAP 1.1, SOAP 1.2, GET, POST and the help page's test form work, and a
 * client generated from the WSDL calls every operation through nginx.
 */
const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => fs.existsSync(p));
const required = process.env.REQUIRE_NGINX === '1';
if (NGINX === undefined && !required) {
  // eslint-disable-next-line no-console
  console.warn('SKIP deploy/nginx tests: nginx is not installed (apt-get install nginx; REQUIRE_NGINX=1 makes this a failure)');
}
const describeNginx = NGINX !== undefined || required ? describe : describe.skip;

const TOKEN = 'fcm:APA91bH-token-1001';
const soapBody = (env: string, ns: string) =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${env}"><soap:Body><GetTokenDevice xmlns="${ns}"><id>dev-1001</id></GetTokenDevice></soap:Body></soap:Envelope>`;

describeNginx.each([
  ['site root', 'student-info.conf', ''],
  ['virtual directory', 'student-info-vdir.conf', '/StudentService'],
])('nginx in front, %s (deploy/nginx/%s)', (_name, file, basePath) => {
  let service: Service;
  let nginx: ChildProcess;
  let dir: string;
  let port: number;
  let base: string;

  beforeAll(async () => {
    expect(NGINX).toBeDefined();
    service = await startService({ env: { TRUST_PROXY: 'true', BASE_PATH: basePath, ADMIN_PORT: '0' } });
    port = await freePort();
    base = `http://127.0.0.1:${port}${basePath}`;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-nginx-'));
    const site = fs
      .readFileSync(path.join(PROJECT_ROOT, 'deploy', 'nginx', file), 'utf8')
      .replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${port};`)
      .replace('server 127.0.0.1:8080;', `server 127.0.0.1:${service.port};`);
    fs.writeFileSync(path.join(dir, 'site.conf'), site);
    // The minimal main configuration around the site file, as /etc/nginx/nginx.conf would include it.
    fs.writeFileSync(
      path.join(dir, 'nginx.conf'),
      [
        ...(process.getuid?.() === 0 ? ['user root;'] : []),
        'worker_processes 1;',
        'daemon off;',
        `pid ${dir}/nginx.pid;`,
        `error_log ${dir}/error.log;`,
        'events {}',
        'http {',
        '  access_log off;',
        ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${dir}/${t};`),
        `  include ${dir}/site.conf;`,
        '}',
      ].join('\n'),
    );
    const check = spawnSync(NGINX!, ['-t', '-p', dir, '-e', `${dir}/error.log`, '-c', `${dir}/nginx.conf`], { encoding: 'utf8' });
    expect(check.stderr).toContain('test is successful');
    nginx = spawn(NGINX!, ['-p', dir, '-e', `${dir}/error.log`, '-c', `${dir}/nginx.conf`], { stdio: 'ignore' });
    for (let i = 0; i < 100; i += 1) {
      if (await request(port, '/').then(() => true, () => false)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      nginx.kill('SIGQUIT');
      await new Promise((r) => nginx.once('exit', r));
    }
    if (service) service.kill();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("?wsdl and ?disco advertise nginx's address, port included", async () => {
    const wsdl = await request(port, `${basePath}/PushNotificationMobile.asmx?wsdl`);
    expect(wsdl.status).toBe(200);
    const locations = [...wsdl.body.matchAll(/location="([^"]+)"/g)].map((m) => m[1]).filter((l) => l.startsWith('http'));
    expect(locations).toEqual(Array(4).fill(`${base}/PushNotificationMobile.asmx`));
    expect(wsdl.headers['content-length']).toBe(String(Buffer.byteLength(wsdl.body)));
    expect((await request(port, `${basePath}/PushNotificationMobile.asmx?disco`)).body).toContain(`address="${base}/PushNotificationMobile.asmx"`);
  });

  test('SOAP 1.1, SOAP 1.2, HTTP GET and HTTP POST work through it, each with a Content-Length', async () => {
    const p = `${basePath}/PushNotificationMobile.asmx`;
    const answers = [
      await request(port, p, {
        method: 'POST',
        headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/GetTokenDevice"' },
        body: soapBody('http://schemas.xmlsoap.org/soap/envelope/', 'http://tempuri.org/'),
      }),
      await request(port, p, {
        method: 'POST',
        headers: { 'Content-Type': 'application/soap+xml; charset=utf-8' },
        body: soapBody('http://www.w3.org/2003/05/soap-envelope', 'http://tempuri.org/'),
      }),
      await request(port, `${p}/GetTokenDevice?id=dev-1001`),
      await request(port, `${p}/GetTokenDevice`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'id=dev-1001' }),
    ];
    for (const a of answers) {
      expect([a.status, a.body.includes(TOKEN)]).toEqual([200, true]);
      expect(a.headers['content-length']).toBe(String(Buffer.byteLength(a.body)));
      expect(a.headers['transfer-encoding']).toBeUndefined();
    }
    // A fault, too, reaches the client unchanged.
    const fault = await request(port, p, { method: 'POST', headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"urn:none"' }, body: '<x/>' });
    expect([fault.status, fault.body]).toEqual([500, expect.stringContaining('Server did not recognize the value of HTTP Header SOAPAction: urn:none.')]);
  });

  test("the help page's test form posts to nginx's address and answers", async () => {
    const page = await request(port, `${basePath}/PushNotificationMobile.asmx?op=GetTokenDevice`);
    const action = /<form target="_blank" action='([^']+)' method="POST">/.exec(page.body)![1]!;
    expect(action).toBe(`${base}/PushNotificationMobile.asmx/GetTokenDevice`);
    const url = new URL(action);
    const answer = await request(Number(url.port), url.pathname, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'id=dev-1001' });
    expect([answer.status, answer.body.includes(TOKEN)]).toEqual([200, true]);
  });

  test('paths match without regard to case, as on IIS', async () => {
    const r = await request(port, `${basePath.toLowerCase()}/pushnotificationmobile.asmx/GetTokenDevice?id=dev-1001`);
    expect([r.status, r.body.includes(TOKEN)]).toEqual([200, true]);
  });

  test('a client generated from the WSDL calls every operation through nginx, on SOAP 1.1 and 1.2', async () => {
    for (const port12 of [false, true]) {
      const options = port12 ? { forceSoap12Headers: true } : {};
      const push = await soap.createClientAsync(`${base}/PushNotificationMobile.asmx?wsdl`, options);
      const [token] = await push.GetTokenDeviceAsync({ id: 'dev-1001' });
      expect(token.GetTokenDeviceResult).toBe(TOKEN);
      // The address the client took from the WSDL is nginx's.
      expect((push as unknown as { lastEndpoint: string }).lastEndpoint).toBe(`${base}/PushNotificationMobile.asmx`);
      await expect(push.GetServerKeyAndSenderAsync({})).resolves.toBeDefined();
      const notes = await soap.createClientAsync(`${base}/NotificationNotes.asmx?wsdl`, options);
      const [school] = await notes.GetStudentSchoolAsync({ school_base_url: 'http://alnoor.school.example', show_active: 49 });
      expect((school.GetStudentSchoolResult.StudentInfo as unknown[]).length).toBe(3);
      const auth = await soap.createClientAsync(`${base}/AuthCodeSending.asmx?wsdl`, options);
      await expect(auth.AuthCodeAsync({ code: '1', phone: '2' })).resolves.toBeDefined();
      const marks = await soap.createClientAsync(`${base}/GetStudnetsMarks.asmx?wsdl`, options);
      await expect(marks.GetStudentsMarksAsync({ StudnetID: '1', SubjectID: '2' })).resolves.toBeDefined();
      const about = await soap.createClientAsync(`${base}/AboutUs.asmx?wsdl`, options);
      await expect(about.GetAboutUsAsync({})).resolves.toBeDefined();
    }
  });
});
