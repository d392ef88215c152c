import * as soap from 'soap';
import { describeNginx, type Nginx, recipeConf, runNginx } from './helpers/nginx';
import { freePort, request, type Service, startService } from './helpers/service';
import { FakeGateway } from './helpers/sms-gateway';
import { countedApart, smsEnv } from './helpers/two-addresses';

/**
 * The nginx recipes of deploy/nginx/, each file as shipped (only its ports substituted, as `npm run
 * try-nginx` runs it: test/helpers/nginx.ts recipeConf) run by Debian's
 * nginx on a non-default port in front of the service: the WSDL advertises nginx's address, answers
 * carry a Content-Length, SOAP 1.1, SOAP 1.2, GET, POST and the help page's test form work, and a
 * client generated from the WSDL calls every operation through nginx, and the SMS limits count
 * each client address apart (the round-robin recipe: test/deploy-nginx-round-robin.test.ts).
 */
const TOKEN = 'fcm:APA91bH-token-1001';
const soapBody = (env: string, ns: string) =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${env}"><soap:Body><GetTokenDevice xmlns="${ns}"><id>dev-1001</id></GetTokenDevice></soap:Body></soap:Envelope>`;

describeNginx.each([
  ['site root', 'student-info.conf', ''],
  ['virtual directory', 'student-info-vdir.conf', '/StudentService'],
])('nginx in front, %s (deploy/nginx/%s)', (_name, file, basePath) => {
  let service: Service;
  let nginx: Nginx;
  let gateway: FakeGateway;
  let port: number;
  let base: string;

  beforeAll(async () => {
    gateway = new FakeGateway();
    service = await startService({ env: { TRUST_PROXY: 'true', BASE_PATH: basePath, ADMIN_PORT: '0', ...smsEnv(await gateway.listen()) } });
    port = await freePort();
    base = `http://127.0.0.1:${port}${basePath}`;
    nginx = await runNginx(recipeConf(file.replace(/\.conf$/, ''), `127.0.0.1:${port}`, [`127.0.0.1:${service.port}`]), port);
  });

  afterAll(async () => {
    await nginx?.stop();
    if (service) service.kill();
    await gateway?.close();
  });

  test("?wsdl and ?disco advertise nginx's address, port included", async () => {
    const wsdl = await request(port, `${basePath}/PushNotificationMobile.asmx?wsdl`);
    expect(wsdl.status).toBe(200);
    const locations = [...wsdl.body.matchAll(/location="([^"]+)"/g)].map((m) => m[1]).filter((l) => l.startsWith('http'));
    expect(locations).toEqual(Array(4).fill(`${base}/PushNotificationMobile.asmx`));
    expect(wsdl.headers['content-length']).toBe(String(Buffer.byteLength(wsdl.body)));
    expect((await request(port, `${basePath}/PushNotificationMobile.asmx?disco`)).body).toContain(
      `address="${base}/PushNotificationMobile.asmx"`,
    );
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
      await request(port, `${p}/GetTokenDevice`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'id=dev-1001',
      }),
    ];
    for (const a of answers) {
      expect([a.status, a.body.includes(TOKEN)]).toEqual([200, true]);
      expect(a.headers['content-length']).toBe(String(Buffer.byteLength(a.body)));
      expect(a.headers['transfer-encoding']).toBeUndefined();
    }
    // A fault, too, reaches the client unchanged.
    const fault = await request(port, p, {
      method: 'POST',
      headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"urn:none"' },
      body: '<x/>',
    });
    expect([fault.status, fault.body]).toEqual([
      500,
      expect.stringContaining('Server did not recognize the value of HTTP Header SOAPAction: urn:none.'),
    ]);
  });

  test("the help page's test form posts to nginx's address and answers", async () => {
    const page = await request(port, `${basePath}/PushNotificationMobile.asmx?op=GetTokenDevice`);
    const action = /<form target="_blank" action='([^']+)' method="POST">/.exec(page.body)![1]!;
    expect(action).toBe(`${base}/PushNotificationMobile.asmx/GetTokenDevice`);
    const url = new URL(action);
    const answer = await request(Number(url.port), url.pathname, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'id=dev-1001',
    });
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

  test("AuthCode's query string (code and phone) is never written to an access log; a request is still logged", async () => {
    const auth = `${basePath}/AuthCodeSending.asmx/AuthCode`;
    // A number the intake refuses (no such range) before any limit counts it: the next test's limits stay whole.
    const query = 'code=480213&phone=%2B9640001234567';
    const asked = [
      `${auth}?${query}`,
      `${auth.toLowerCase()}?${query}`,
      `${basePath}/AuthCodeSending.asmx/%41uthCode?%63ode=480213&phone=0000%20123%204567`,
      `${basePath}/AuthCodeSending.asmx/00001234567?${query}`,
      `${basePath}/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001`,
    ];
    const headers = { 'User-Agent': 'access-log-check' };
    for (const p of asked) expect([p, (await request(port, p, { headers })).status]).toEqual([p, expect.any(Number)]);
    await request(port, auth, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: query,
    });
    // nginx writes a request's line once its answer is sent, which may be after the client has read it.
    const lines = () =>
      nginx
        .accessLogs()
        .split('\n')
        .filter((l) => l.includes('"access-log-check"'));
    for (let i = 0; i < 200 && lines().length < asked.length + 1; i++) await new Promise((r) => setTimeout(r, 25));
    const logged = lines();
    expect(logged).toHaveLength(asked.length + 1);
    expect(logged).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`"GET ${auth}? HTTP/1.1" 200`),
        // The operation name is case-sensitive (ASMX refuses it), the path is logged all the same.
        expect.stringContaining(`"GET ${auth.toLowerCase()}? HTTP/1.1" 500`),
        expect.stringContaining(`"GET [a path holding a number]? HTTP/1.1" 500`),
        expect.stringContaining(`"POST ${auth} HTTP/1.1" 200`),
        expect.stringContaining(`"GET ${basePath}/PushNotificationMobile.asmx/GetTokenDevice? HTTP/1.1" 200`),
      ]),
    );
    expect(nginx.accessLogs()).not.toMatch(/480213|code=|phone=|0001234567|0000%20123|1\D{0,3}2\D{0,3}3\D{0,3}4\D{0,3}5\D{0,3}6\D{0,3}7/i);
  });

  test('AuthCode from two client source addresses: the per-address SMS limit counts them apart', async () => {
    await countedApart({ port, pathPrefix: basePath, gateway, services: [service] });
  });
});
