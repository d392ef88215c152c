import zlib from 'node:zlib';
import { createTestApp, type TestApp } from './helpers/app';
import { envelope, ENV11, ENV12, faultOf, NS, opElement, post, soap11, soap12 } from './helpers/soap';
import { findElement, parseXml } from './helpers/xml';
import { queued } from './helpers/outbox';

/** The SOAP rules of wire-notes.md beyond the recorded exchanges. */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const PUSH = '/PushNotificationMobile.asmx';
const NOTES = '/NotificationNotes.asmx';
const token = (id: string) => opElement('GetTokenDevice', { id });
const resultOf = (body: string) => findElement(parseXml(body), 'GetTokenDeviceResult')?.text;

describe('SOAP 1.1 routing by SOAPAction', () => {
  test('quoted and unquoted SOAPAction both route', async () => {
    for (const action of [`"${NS}GetTokenDevice"`, `${NS}GetTokenDevice`]) {
      const r = await soap11(t.app, PUSH, action, envelope('1.1', token('dev-1001')));
      expect(r.status).toBe(200);
      expect(resultOf(r.body)).toBe('fcm:APA91bH-token-1001');
    }
  });

  test.each([
    ['""', ''],
    [`"${NS}gettokendevice"`, `${NS}gettokendevice`],
    [`"${NS}GetTokenDevice`, `"${NS}GetTokenDevice`],
  ])('SOAPAction %s is not recognised', async (action, shown) => {
    const r = await soap11(t.app, PUSH, action, envelope('1.1', token('dev-1001')));
    expect(r.status).toBe(500);
    expect(r.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(faultOf(r.body)).toEqual({
      code: 'soap:Client',
      text: `Server did not recognize the value of HTTP Header SOAPAction: ${shown}.`,
    });
  });

  test('the SOAPAction is checked before the body is read', async () => {
    const r = await soap11(t.app, PUSH, `"${NS}Nope"`, '<soap:Envelope><soap:Bo');
    expect(faultOf(r.body).text).toMatch(/^Server did not recognize the value of HTTP Header SOAPAction/);
  });

  test('SOAPAction naming one operation with another body runs the named one with no arguments', async () => {
    const r = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, envelope('1.1', opElement('GetServerKeyAndSender', { id: 'dev-1001' })));
    expect(r.status).toBe(200);
    expect(findElement(parseXml(r.body), 'GetTokenDeviceResponse')).toBeDefined();
    expect(resultOf(r.body)).toBeUndefined();
  });

  test('a 1.2 envelope sent as text/xml is answered in 1.2', async () => {
    const r = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, envelope('1.2', token('dev-1001')));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/soap+xml; charset=utf-8');
    expect(parseXml(r.body).name).toBe(`{${ENV12}}Envelope`);
  });

  test('no SOAPAction with a known body element is answered normally in 1.1', async () => {
    const r = await soap11(t.app, PUSH, null, envelope('1.1', token('dev-1002')));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(resultOf(r.body)).toBe('fcm:APA91bH-token-1002');
  });

  test('no SOAPAction with an unknown body element: no valid action, in the request version', async () => {
    const r = await soap11(t.app, PUSH, null, envelope('1.1', opElement('Nope')));
    expect(r.status).toBe(500);
    expect(faultOf(r.body)).toEqual({
      code: 'soap:Client',
      text: 'Unable to handle request without a valid action parameter. Please supply a valid soap action.',
    });
  });
});

describe('SOAP 1.2 routing', () => {
  test('the action parameter wins over the body', async () => {
    const r = await soap12(t.app, PUSH, envelope('1.2', opElement('GetServerKeyAndSender')), `${NS}GetTokenDevice`);
    expect(r.status).toBe(200);
    expect(findElement(parseXml(r.body), 'GetTokenDeviceResponse')).toBeDefined();
  });

  test('an unknown action falls back to the body element', async () => {
    const r = await soap12(t.app, PUSH, envelope('1.2', token('dev-1001')), `${NS}Nope`);
    expect(resultOf(r.body)).toBe('fcm:APA91bH-token-1001');
  });

  test('an unknown action and an unknown body: the action was not recognised', async () => {
    const r = await soap12(t.app, PUSH, envelope('1.2', opElement('Nope')), `${NS}Nope`);
    expect(r.status).toBe(500);
    expect(r.headers['content-type']).toBe('application/soap+xml; charset=utf-8');
    expect(faultOf(r.body)).toEqual({
      code: 'soap:Sender',
      text: `Unable to handle request. The action '${NS}Nope' was not recognized.`,
    });
  });

  test('the answer carries no action parameter in its Content-Type', async () => {
    const r = await soap12(t.app, PUSH, envelope('1.2', token('dev-1001')), `${NS}GetTokenDevice`);
    expect(r.headers['content-type']).toBe('application/soap+xml; charset=utf-8');
  });
});

describe('media types and versions', () => {
  test('a 1.1 envelope sent as application/soap+xml: 415, empty', async () => {
    const r = await soap12(t.app, PUSH, envelope('1.1', token('dev-1001')));
    expect(r.status).toBe(415);
    expect(r.body).toBe('');
  });

  test.each(['text/plain', 'application/xml', 'application/json'])('%s: 415, empty', async (ct) => {
    const r = await post(t.app, PUSH, { 'Content-Type': ct, SOAPAction: `"${NS}GetTokenDevice"` }, envelope('1.1', token('x')));
    expect(r.status).toBe(415);
    expect(r.body).toBe('');
  });

  test('a root that is not a SOAP envelope: version mismatch', async () => {
    const r = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, '<Envelope xmlns="urn:other"><Body/></Envelope>');
    expect(r.status).toBe(500);
    expect(faultOf(r.body)).toEqual({
      code: 'soap:VersionMismatch',
      text: `Possible SOAP version mismatch: Envelope namespace urn:other was unexpected. Expecting ${ENV11}.`,
    });
  });
});

describe('malformed and hostile XML', () => {
  test('malformed with a SOAPAction: 400, empty body', async () => {
    const r = await soap11(
      t.app,
      PUSH,
      `"${NS}GetTokenDevice"`,
      '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><a>',
    );
    expect(r.status).toBe(400);
    expect(r.body).toBe('');
  });

  test('malformed with no SOAPAction: 1.2 Receiver fault with the parser message', async () => {
    const r = await soap11(t.app, PUSH, null, '<soap:Envelope><oops');
    expect(r.status).toBe(500);
    expect(r.headers['content-type']).toBe('application/soap+xml; charset=utf-8');
    const f = faultOf(r.body);
    expect(f.code).toBe('soap:Receiver');
    expect(f.text).toMatch(/^Server was unable to process request\. ---> \S/);
  });

  test('an empty 1.2 body: root element is missing', async () => {
    const r = await soap12(t.app, PUSH, '');
    expect(faultOf(r.body)).toEqual({
      code: 'soap:Receiver',
      text: 'Server was unable to process request. ---> Root element is missing.',
    });
  });

  test('an empty 1.1 body with a SOAPAction: 400', async () => {
    const r = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, '');
    expect(r.status).toBe(400);
  });

  const laughs =
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>' +
    envelope('1.1', opElement('GetTokenDevice', { id: '&lol2;' })).replace('<?xml version="1.0" encoding="utf-8"?>', '');
  const external = `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${envelope('1.2', opElement('GetTokenDevice', { id: '&e;' }))}`;

  test('a DTD with a SOAPAction: 400, empty', async () => {
    const r = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, laughs);
    expect(r.status).toBe(400);
    expect(r.body).toBe('');
  });

  test('a DTD without a SOAPAction: DTD is prohibited, nothing expanded or fetched', async () => {
    const r = await soap12(t.app, PUSH, external);
    expect(r.status).toBe(500);
    expect(faultOf(r.body)).toEqual({
      code: 'soap:Receiver',
      text: 'Server was unable to process request. ---> DTD is prohibited in this XML document.',
    });
    expect(r.body).not.toContain('root:');
  });

  test('a body over 4 MB is refused as ASP.NET refuses it, and the service keeps serving', async () => {
    const big = envelope('1.1', opElement('GetTokenDevice', { id: 'x'.repeat(5 * 1024 * 1024) }));
    const r = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, big);
    expect(r.status).toBe(500);
    expect(faultOf(r.body)).toEqual({
      code: 'soap:Server',
      text: 'There was an exception running the extensions specified in the config file. ---> Maximum request length exceeded.',
    });
    const r12 = await soap12(t.app, PUSH, envelope('1.2', opElement('GetTokenDevice', { id: 'x'.repeat(5 * 1024 * 1024) })));
    expect(faultOf(r12.body)).toEqual({
      code: 'soap:Receiver',
      text: 'Server was unable to process request. ---> Maximum request length exceeded.',
    });
    const ok = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, envelope('1.1', token('dev-1001')));
    expect(ok.status).toBe(200);
  });

  test('a gzip bomb is not inflated past the limit', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    const r = await post(
      t.app,
      PUSH,
      { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}GetTokenDevice"`, 'Content-Encoding': 'gzip' },
      bomb.toString('latin1'),
    );
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.body).not.toMatch(/at \w+ \(|node_modules|\/src\//);
  });

  test('a service failure is a Server fault that reveals nothing', async () => {
    const broken = jest.spyOn(t.store, 'deviceToken').mockRejectedValueOnce(new Error('SQLITE_CORRUPT: /var/db/secret.db near "SELECT"'));
    const r = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, envelope('1.1', token('dev-1001')));
    broken.mockRestore();
    expect(r.status).toBe(500);
    const f = faultOf(r.body);
    expect(f.code).toBe('soap:Server');
    expect(f.text).toMatch(/^Server was unable to process request\. ---> /);
    expect(r.body).not.toMatch(/SQLITE|secret|SELECT|\.ts|at /);
  });
});

describe('reading parameters', () => {
  test('order does not matter, unknown elements are ignored, comments/CDATA/char references/Header are accepted', async () => {
    const body =
      `<GetStudentSchool xmlns="${NS}"><!-- c --><show_active>&#52;9</show_active><junk>1</junk>` +
      `<school_base_url><![CDATA[http://alnoor.school.example]]></school_base_url></GetStudentSchool>`;
    const r = await soap11(
      t.app,
      NOTES,
      `"${NS}GetStudentSchool"`,
      envelope('1.1', body, '<soap:Header><h xmlns="urn:h">x</h></soap:Header>'),
    );
    expect(r.status).toBe(200);
    expect(r.body.match(/<StudentInfo>/g)).toHaveLength(3);
  });

  test('white space inside a string parameter is kept', async () => {
    const r = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, envelope('1.1', token(' dev-1001 ')));
    expect(resultOf(r.body)).toBeUndefined();
  });

  test('an absent parameter is null: an unknown device answers no result element', async () => {
    const r = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, envelope('1.1', opElement('GetTokenDevice')));
    expect(r.body).toContain(`<GetTokenDeviceResponse xmlns="${NS}" />`);
  });

  test('an absent show_active is the char 0: no student matches', async () => {
    const r = await soap11(
      t.app,
      NOTES,
      `"${NS}GetStudentSchool"`,
      envelope('1.1', opElement('GetStudentSchool', { school_base_url: 'http://alnoor.school.example' })),
    );
    expect(r.status).toBe(200);
    expect(r.body).toContain('<GetStudentSchoolResult />');
  });

  test.each([
    ['49', 3],
    [' 49 ', 3],
    ['0049', 3],
    ['48', 1],
  ])('show_active %j converts', async (code, rows) => {
    const r = await soap11(
      t.app,
      NOTES,
      `"${NS}GetStudentSchool"`,
      envelope('1.1', opElement('GetStudentSchool', { school_base_url: 'http://alnoor.school.example', show_active: code })),
    );
    expect(r.status).toBe(200);
    expect(r.body.match(/<StudentInfo>/g)).toHaveLength(rows);
  });

  const escapeRegExp = (s: string) => s.replace(/[.()]/g, '\\$&');
  const ERROR_AT = 'Server was unable to read request. ---> There is an error in XML document';
  test.each([
    ['+49', 'Input string was not in a correct format.'],
    ['-1', 'Input string was not in a correct format.'],
    ['abc', 'Input string was not in a correct format.'],
    ['', 'Input string was not in a correct format.'],
    ['65536', 'Value was either too large or too small for a UInt16.'],
    [
      '99999999999999999999',
      'Value was either too large or too small for a UInt16. ---> Value was either too large or too small for a UInt32.',
    ],
  ])('show_active %j is a Client fault: %s', async (code, reason) => {
    const r = await soap11(
      t.app,
      NOTES,
      `"${NS}GetStudentSchool"`,
      envelope('1.1', opElement('GetStudentSchool', { school_base_url: 'x', show_active: code })),
    );
    expect(r.status).toBe(500);
    const f = faultOf(r.body);
    expect(f.code).toBe('soap:Client');
    expect(f.text).toMatch(new RegExp(`^${escapeRegExp(ERROR_AT)} \\(1, \\d+\\)\\. ---> ${escapeRegExp(reason)}$`));
  });

  test('the error position is the node after the parameter, as .NET reports it', async () => {
    // Both positions as the legacy host reports them: the name of the next tag, or the (blank) text
    // right after the element.
    const body =
      `<soap:Envelope xmlns:soap="${ENV11}"><soap:Body><GetStudentSchool xmlns="${NS}">` +
      '<school_base_url>http://alnoor.school.example</school_base_url><show_active>+49</show_active></GetStudentSchool></soap:Body></soap:Envelope>';
    const r = await soap11(t.app, NOTES, `"${NS}GetStudentSchool"`, body);
    expect(faultOf(r.body).text).toContain('There is an error in XML document (1, 223).');
    const multiline = body.replace('<show_active>', '\n  <show_active>').replace('</show_active>', '</show_active>\n');
    const r2 = await soap11(t.app, NOTES, `"${NS}GetStudentSchool"`, multiline);
    expect(faultOf(r2.body).text).toContain('There is an error in XML document (2, 33).');
  });

  test('in SOAP 1.2 a bad char is a Sender fault', async () => {
    const r = await soap12(t.app, NOTES, envelope('1.2', opElement('GetStudentSchool', { school_base_url: 'x', show_active: '1x' })));
    expect(faultOf(r.body).code).toBe('soap:Sender');
  });
});

describe('answers', () => {
  test('Content-Length framing, cache header, xsi and xsd declared, no indentation', async () => {
    const r = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, envelope('1.1', token('dev-1001')));
    expect(r.headers['transfer-encoding']).toBeUndefined();
    expect(r.headers['content-length']).toBe(String(Buffer.byteLength(r.body)));
    expect(r.headers['cache-control']).toBe('private, max-age=0');
    expect(r.body).toBe(
      `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ENV11}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
        `xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body><GetTokenDeviceResponse xmlns="${NS}">` +
        '<GetTokenDeviceResult>fcm:APA91bH-token-1001</GetTokenDeviceResult></GetTokenDeviceResponse></soap:Body></soap:Envelope>',
    );
  });

  test('text is escaped and non-ASCII is sent as UTF-8', async () => {
    const r = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, envelope('1.1', token('dev-1004')));
    expect(r.body).toContain('<GetTokenDeviceResult>tok&lt;&amp;&gt;"quoted"</GetTokenDeviceResult>');
    const ar = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, envelope('1.1', token('dev-3001')));
    expect(ar.body).toContain('<GetTokenDeviceResult>رمز-3001</GetTokenDeviceResult>');
  });

  test('an empty-string result is an empty element, not an absent one', async () => {
    const r = await soap11(t.app, PUSH, `"${NS}GetTokenDevice"`, envelope('1.1', token('dev-empty')));
    expect(r.body).toContain('<GetTokenDeviceResult />');
  });

  test('paths match without regard to case', async () => {
    const r = await soap11(t.app, '/pushnotificationmobile.ASMX', `"${NS}GetTokenDevice"`, envelope('1.1', token('dev-1001')));
    expect(resultOf(r.body)).toBe('fcm:APA91bH-token-1001');
  });

  test('AuthCode over SOAP is kept in the outbox, its phone in E.164; an invalid phone is not, with the same answer', async () => {
    const r = await soap12(
      t.app,
      '/AuthCodeSending.asmx',
      envelope('1.2', opElement('AuthCode', { code: '777', phone: '+964 770 123 4599' })),
    );
    expect(r.status).toBe(200);
    expect(r.body).toContain(`<AuthCodeResponse xmlns="${NS}" />`);
    const bad = await soap12(t.app, '/AuthCodeSending.asmx', envelope('1.2', opElement('AuthCode', { code: '778', phone: '+964770' })));
    expect(bad.status).toBe(200);
    expect(bad.body).toBe(r.body);
    const pending = await queued(t.store);
    expect(pending.some((p) => p.code === '777' && p.phone === '+9647701234599')).toBe(true);
    expect(pending.some((p) => p.code === '778')).toBe(false);
  });
});
