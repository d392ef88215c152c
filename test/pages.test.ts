import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { parseStringPromise } from 'xml2js';
import { type Config, loadConfig, PROTOCOLS } from '../src/config';
import { createServicePages } from '../src/pages';
import { discoDocument } from '../src/pages/disco';
import { WsdlCatalog } from '../src/pages/wsdl';
import { projectRoot } from '../src/basics/paths';
import { ENDPOINTS, findEndpoint } from '../src/contract/operations';

const TEMPURI = 'http://tempuri.org/';
const FIXTURES = path.join(__dirname, 'fixtures', 'exchanges');

interface WsdlExchange {
  request: { method: string; path: string };
  response: { status: number; headers: Record<string, string>; body: string };
}

function recorded(endpoint: string): WsdlExchange {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, `${endpoint}.wsdl.json`), 'utf8')) as WsdlExchange;
}

/** The recorded WSDL as it reads for a given service URL prefix and namespace. */
/** The recorded WSDL for another namespace: soapActions get a '/' after a namespace without one, as .NET writes them. */
function expectedWsdl(endpoint: string, baseUrl: string, ns = TEMPURI): string {
  const actionPrefix = ns.endsWith('/') ? ns : `${ns}/`;
  return recorded(endpoint)
    .response.body.split('{base_url}')
    .join(baseUrl)
    .split(`soapAction="${TEMPURI}`)
    .join(`soapAction="${actionPrefix}`)
    .split(TEMPURI)
    .join(ns);
}

function config(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({ PORT: '0', HOST: '127.0.0.1', SQLITE_PATH: ':memory:' }),
    ...overrides,
  };
}

/** A stand-in for the lead's routing: `/<basePath>/<Endpoint>.asmx`, matched without regard to case. */
function appFor(overrides: Partial<Config> = {}): express.Express {
  const cfg = config(overrides);
  const pages = createServicePages(cfg, new WsdlCatalog(cfg.xmlNamespace));
  const app = express();
  app.get(/.*/, (req, res, next) => {
    const match = /^(.*)\/([^/]+)\.asmx$/i.exec(req.path);
    const endpoint = match === null ? undefined : findEndpoint(match[2]!);
    if (match === null || endpoint === undefined || match[1]!.toLowerCase() !== cfg.basePath.toLowerCase()) return next();
    pages(endpoint, req, res);
  });
  return app;
}

const app = appFor();

describe('WSDL files', () => {
  it.each(ENDPOINTS.map((e) => e.name))('%s.wsdl is the recorded WSDL with placeholders', (name) => {
    const file = fs.readFileSync(path.join(projectRoot, 'wsdl', `${name}.wsdl`), 'utf8');
    expect(file).not.toContain('tempuri');
    expect(file.split(TEMPURI).join('')).toBe(file);
    expect(file.split('{soap_action_prefix}').join(TEMPURI).split('{xml_namespace}').join(TEMPURI)).toBe(recorded(name).response.body);
  });

  it('the catalog refuses to start without a file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsdl-'));
    try {
      expect(() => new WsdlCatalog(TEMPURI, dir)).toThrow(/Cannot read the service description of AuthCodeSending/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('projectRoot is the directory of package.json', () => {
    expect(fs.existsSync(path.join(projectRoot, 'package.json'))).toBe(true);
    expect(fs.existsSync(path.join(projectRoot, 'wsdl'))).toBe(true);
  });
});

describe('GET /X.asmx?wsdl', () => {
  it.each(ENDPOINTS.map((e) => e.name))('%s equals the recorded exchange', async (name) => {
    const exchange = recorded(name);
    const res = await request(app).get(exchange.request.path).set('Host', 'example.com:8080');
    expect(res.status).toBe(exchange.response.status);
    expect(res.headers['content-type']).toBe(exchange.response.headers['content-type']);
    expect(res.headers['cache-control']).toBe('private, max-age=0');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.text)));
    expect(res.text).toBe(expectedWsdl(name, 'http://example.com:8080'));
    // And by meaning, which is what clients depend on.
    expect(await parseStringPromise(res.text)).toEqual(await parseStringPromise(expectedWsdl(name, 'http://example.com:8080')));
  });

  it.each(['?wsdl', '?WSDL', '?Wsdl', '?wsdl&x=1', '?x=1&wSdL', '?%77sdl'])('answers %s', async (query) => {
    const res = await request(app).get(`/AboutUs.asmx${query}`).set('Host', 'h');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(res.text).toBe(expectedWsdl('AboutUs', 'http://h'));
  });

  it('substitutes a configured namespace, escaped in attributes', async () => {
    const plain = await request(appFor({ xmlNamespace: 'urn:school:v1' }))
      .get('/NotificationNotes.asmx?wsdl')
      .set('Host', 'h');
    expect(plain.text).toBe(expectedWsdl('NotificationNotes', 'http://h', 'urn:school:v1'));

    const odd = 'http://school.example/ns?a=1&b="2"';
    const res = await request(appFor({ xmlNamespace: odd }))
      .get('/PushNotificationMobile.asmx?wsdl')
      .set('Host', 'h');
    const doc = await parseStringPromise(res.text);
    expect(doc['wsdl:definitions'].$.targetNamespace).toBe(odd);
    expect(doc['wsdl:definitions'].$['xmlns:tns']).toBe(odd);
    const soapOp = doc['wsdl:definitions']['wsdl:binding'][0]['wsdl:operation'][0]['soap:operation'][0];
    expect(soapOp.$.soapAction).toBe(`${odd}/GetTokenDevice`);
  });

  it('the request path is matched without regard to case, the address is the path the client used', async () => {
    const res = await request(appFor({ basePath: '/StudentService' }))
      .get('/studentservice/notificationnotes.asmx?WSDL')
      .set('Host', 'school.example');
    expect(res.text).toBe(
      expectedWsdl('NotificationNotes', 'http://school.example/studentservice').replace(
        /studentservice\/NotificationNotes\.asmx/g,
        'studentservice/notificationnotes.asmx',
      ),
    );
  });

  it.each([
    ['?wsdl=', 'XML Web service description was not found.'],
    ['?WSDL=wsdl0', 'XML Web service description was not found.'],
    ['?schema=schema1', 'Schema not found.'],
  ])('%s is a 500 as in ASMX', async (query, message) => {
    const res = await request(app).get(`/AboutUs.asmx${query}`);
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['cache-control']).toBe('private, max-age=0');
    expect(res.text).toBe(`${message}\r\n`);
  });

  it.each(['?wsdl&foo', '?wsdl&wsdl', '?wsdl&', '?disco=', '?foo'])('%s is the help page', async (query) => {
    const res = await request(app).get(`/AboutUs.asmx${query}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('<title>AboutUs Web Service</title>');
  });
});

describe('service addresses', () => {
  const address = async (cfg: Partial<Config>, headers: Record<string, string>, urlPath = '/AuthCodeSending.asmx?wsdl') => {
    let req = request(appFor(cfg)).get(urlPath);
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    const res = await req;
    const locations = [...res.text.matchAll(/<(?:soap|soap12|http):address location="([^"]*)" \/>/g)].map((m) => m[1]);
    expect(locations).toHaveLength(4);
    expect(new Set(locations).size).toBe(1);
    return locations[0];
  };

  it('follows the Host header', async () => {
    expect(await address({}, { Host: 'school.example' })).toBe('http://school.example/AuthCodeSending.asmx');
    expect(await address({}, { Host: '10.0.0.5:8080' })).toBe('http://10.0.0.5:8080/AuthCodeSending.asmx');
    expect(await address({}, { Host: '[::1]:8080' })).toBe('http://[::1]:8080/AuthCodeSending.asmx');
  });

  it('prefixes BASE_PATH', async () => {
    expect(await address({ basePath: '/StudentService' }, { Host: 'h' }, '/StudentService/AuthCodeSending.asmx?wsdl')).toBe(
      'http://h/StudentService/AuthCodeSending.asmx',
    );
  });

  it('ignores X-Forwarded-* unless TRUST_PROXY', async () => {
    const forwarded = { Host: 'internal:8080', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'public.example' };
    expect(await address({}, forwarded)).toBe('http://internal:8080/AuthCodeSending.asmx');
    expect(await address({ trustProxy: true }, forwarded)).toBe('https://public.example/AuthCodeSending.asmx');
  });

  it('takes the first of listed forwarded values and ignores X-Forwarded-Prefix', async () => {
    const headers = {
      Host: 'internal',
      'X-Forwarded-Proto': 'https, http',
      'X-Forwarded-Host': 'public.example:8443, proxy2.local',
      'X-Forwarded-Prefix': '/prefix',
    };
    expect(await address({ trustProxy: true, basePath: '/School' }, headers, '/School/AuthCodeSending.asmx?wsdl')).toBe(
      'https://public.example:8443/School/AuthCodeSending.asmx',
    );
  });

  it('uses Host when only the scheme is forwarded, and refuses odd schemes', async () => {
    expect(await address({ trustProxy: true }, { Host: 'h', 'X-Forwarded-Proto': 'HTTPS' })).toBe('https://h/AuthCodeSending.asmx');
    expect(await address({ trustProxy: true }, { Host: 'h', 'X-Forwarded-Proto': 'javascript' })).toBe('http://h/AuthCodeSending.asmx');
  });

  it('falls back from an implausible forwarded host to Host, and from an implausible Host to the local address', async () => {
    expect(await address({ trustProxy: true }, { Host: 'h', 'X-Forwarded-Host': 'evil"><script>x</script>' })).toBe(
      'http://h/AuthCodeSending.asmx',
    );
    expect(await address({ trustProxy: true }, { Host: 'h', 'X-Forwarded-Host': 'user@evil.example/path' })).toBe(
      'http://h/AuthCodeSending.asmx',
    );
    expect(await address({}, { Host: 'a"b<c>' })).toMatch(/^http:\/\/(127\.0\.0\.1|\[::1\]):\d+\/AuthCodeSending\.asmx$/);
    // Shaped like a host, but no URL can hold it (found by the fuzzer: the help page failed on these).
    for (const hostile of ['127.0.0.1:93505', '[:::1::]:80', '[zz]']) {
      expect(await address({}, { Host: hostile })).toMatch(/^http:\/\/(127\.0\.0\.1|\[::1\]):\d+\/AuthCodeSending\.asmx$/);
    }
  });

  it('PUBLIC_URL wins over everything', async () => {
    const headers = { Host: 'internal', 'X-Forwarded-Host': 'other.example', 'X-Forwarded-Proto': 'http' };
    expect(
      await address(
        { publicUrl: 'https://school.example/ws', trustProxy: true, basePath: '/StudentService' },
        headers,
        '/StudentService/AuthCodeSending.asmx?wsdl',
      ),
    ).toBe('https://school.example/ws/AuthCodeSending.asmx');
  });
});

describe('GET /X.asmx?disco', () => {
  it('is the ASMX discovery document', async () => {
    const res = await request(app).get('/NotificationNotes.asmx?DISCO').set('Host', '127.0.0.1:9090');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(res.headers['cache-control']).toBe('private, max-age=0');
    // Byte for byte what the legacy host answers.
    expect(res.text).toBe(
      [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<discovery xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://schemas.xmlsoap.org/disco/">',
        '  <contractRef ref="http://127.0.0.1:9090/NotificationNotes.asmx?wsdl" docRef="http://127.0.0.1:9090/NotificationNotes.asmx" xmlns="http://schemas.xmlsoap.org/disco/scl/" />',
        '  <soap address="http://127.0.0.1:9090/NotificationNotes.asmx" xmlns:q1="http://tempuri.org/" binding="q1:NotificationNotesSoap" xmlns="http://schemas.xmlsoap.org/disco/soap/" />',
        '  <soap address="http://127.0.0.1:9090/NotificationNotes.asmx" xmlns:q2="http://tempuri.org/" binding="q2:NotificationNotesSoap12" xmlns="http://schemas.xmlsoap.org/disco/soap/" />',
        '</discovery>',
      ].join('\n'),
    );
  });

  it('follows the namespace and the service URL', async () => {
    const doc = await parseStringPromise(
      discoDocument('https://h/S/AboutUs.asmx', findEndpoint('AboutUs')!, 'urn:x&y', new Set(PROTOCOLS)),
    );
    expect(doc.discovery.contractRef[0].$).toMatchObject({ ref: 'https://h/S/AboutUs.asmx?wsdl', docRef: 'https://h/S/AboutUs.asmx' });
    expect(doc.discovery.soap.map((s: { $: Record<string, string> }) => s.$)).toEqual([
      {
        address: 'https://h/S/AboutUs.asmx',
        'xmlns:q1': 'urn:x&y',
        binding: 'q1:AboutUsSoap',
        xmlns: 'http://schemas.xmlsoap.org/disco/soap/',
      },
      {
        address: 'https://h/S/AboutUs.asmx',
        'xmlns:q2': 'urn:x&y',
        binding: 'q2:AboutUsSoap12',
        xmlns: 'http://schemas.xmlsoap.org/disco/soap/',
      },
    ]);
  });
});

describe('GET /X.asmx (service help page)', () => {
  it('names the service, links the description and lists the operations in ordinal order', async () => {
    const res = await request(app).get('/PushNotificationMobile.asmx').set('Host', 'h');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('private, max-age=0');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.text)));
    expect(res.text).toContain('<title>PushNotificationMobile Web Service</title>');
    expect(res.text).toContain('<p class="heading1">PushNotificationMobile</p>');
    expect(res.text).toContain(
      'The following operations are supported.  For a formal definition, please review the <a href="PushNotificationMobile.asmx?WSDL">Service Description</a>.',
    );
    expect(res.text).toContain('<link rel="alternate" type="text/xml" href="/PushNotificationMobile.asmx?disco" />');
    const links = [...res.text.matchAll(/<a href="PushNotificationMobile\.asmx\?op=(\w+)">(\w+)<\/a>/g)].map((m) => [m[1], m[2]]);
    expect(links).toEqual([
      ['GetServerKeyAndSender', 'GetServerKeyAndSender'],
      ['GetTokenDevice', 'GetTokenDevice'],
    ]);
  });

  it('warns about tempuri.org only when that is the namespace', async () => {
    const warning = 'This web service is using http://tempuri.org/ as its default namespace.';
    expect((await request(app).get('/AboutUs.asmx')).text).toContain(warning);
    expect((await request(appFor({ xmlNamespace: 'urn:school:v1' })).get('/AboutUs.asmx')).text).not.toContain(warning);
  });

  it('shows the virtual directory in the discovery link', async () => {
    const res = await request(appFor({ basePath: '/StudentService' })).get('/StudentService/AboutUs.asmx');
    expect(res.text).toContain('href="/StudentService/AboutUs.asmx?disco"');
  });
});

describe('GET /X.asmx?op=Op', () => {
  const opPage = async (urlPath: string, cfg: Partial<Config> = {}, host = 'school.example:8080') =>
    request(appFor(cfg)).get(urlPath).set('Host', host);

  it('has a test form posting each parameter to /X.asmx/Op', async () => {
    const res = await opPage('/StudentService/NotificationNotes.asmx?op=GetStudentSchool', { basePath: '/StudentService' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('<h2>GetStudentSchool</h2>');
    expect(res.text).toContain('<a href="NotificationNotes.asmx">here</a>');
    const form = /<form ([^>]*)>([\s\S]*?)<\/form>/.exec(res.text);
    expect(form).not.toBeNull();
    expect(form![1]).toContain('target="_blank"');
    expect(form![1]).toContain('method="POST"');
    expect(form![1]).toContain("action='http://school.example:8080/StudentService/NotificationNotes.asmx/GetStudentSchool'");
    const inputs = [...form![2]!.matchAll(/<input class="frmInput" type="text" size="50" name="(\w+)">/g)].map((m) => m[1]);
    expect(inputs).toEqual(['school_base_url', 'show_active']);
    expect(form![2]).toContain('<input type="submit" value="Invoke" class="button">');
  });

  it('shows SOAP 1.1, SOAP 1.2, HTTP GET and HTTP POST samples with placeholders', async () => {
    const res = await opPage('/StudentService/NotificationNotes.asmx?op=GetStudentSchool', { basePath: '/StudentService' });
    const text = res.text;
    for (const title of ['SOAP 1.1', 'SOAP 1.2', 'HTTP GET', 'HTTP POST']) expect(text).toContain(`<h3>${title}</h3>`);
    const v = (s: string) => `<font class=value>${s}</font>`;
    expect(text).toContain(
      [
        '<pre>POST /StudentService/NotificationNotes.asmx HTTP/1.1',
        'Host: school.example',
        'Content-Type: text/xml; charset=utf-8',
        `Content-Length: ${v('length')}`,
        'SOAPAction: "http://tempuri.org/GetStudentSchool"',
        '',
        '&lt;?xml version="1.0" encoding="utf-8"?&gt;',
        '&lt;soap:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"&gt;',
        '  &lt;soap:Body&gt;',
        '    &lt;GetStudentSchool xmlns="http://tempuri.org/"&gt;',
        `      &lt;school_base_url&gt;${v('string')}&lt;/school_base_url&gt;`,
        `      &lt;show_active&gt;${v('char')}&lt;/show_active&gt;`,
        '    &lt;/GetStudentSchool&gt;',
        '  &lt;/soap:Body&gt;',
        '&lt;/soap:Envelope&gt;</pre>',
      ].join('\r\n'),
    );
    expect(text).toContain('Content-Type: application/soap+xml; charset=utf-8');
    expect(text).toContain(
      '&lt;soap12:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:soap12="http://www.w3.org/2003/05/soap-envelope"&gt;',
    );
    // Two StudentInfo items in each of the four responses.
    expect(text.split('&lt;StudentInfo&gt;').length - 1).toBe(8);
    expect(text).toContain(
      `      &lt;GetStudentSchoolResult&gt;\r\n        &lt;StudentInfo&gt;\r\n          &lt;id_student&gt;${v('string')}&lt;/id_student&gt;`,
    );
    expect(text).toContain(
      `<pre>GET /StudentService/NotificationNotes.asmx/GetStudentSchool?<font class=key>school_base_url</font>=${v('string')}&amp;<font class=key>show_active</font>=${v('string')} HTTP/1.1\r\nHost: school.example\r\n</pre>`,
    );
    expect(text).toContain(
      `<pre>POST /StudentService/NotificationNotes.asmx/GetStudentSchool HTTP/1.1\r\nHost: school.example\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${v('length')}\r\n\r\n<font class=key>school_base_url</font>=${v('string')}&amp;<font class=key>show_active</font>=${v('string')}</pre>`,
    );
    expect(text).toContain('&lt;ArrayOfStudentInfo xmlns="http://tempuri.org/"&gt;');
  });

  it('shows string results and parameterless, void operations as ASP.NET does', async () => {
    const token = (await opPage('/PushNotificationMobile.asmx?op=GetTokenDevice')).text;
    expect(token).toContain('&lt;GetTokenDeviceResult&gt;<font class=value>string</font>&lt;/GetTokenDeviceResult&gt;');
    expect(token).toContain('&lt;string xmlns="http://tempuri.org/"&gt;<font class=value>string</font>&lt;/string&gt;');

    const about = (await opPage('/AboutUs.asmx?op=GetAboutUs')).text;
    expect(about).toContain('    &lt;GetAboutUs xmlns="http://tempuri.org/" /&gt;');
    expect(about).toContain('    &lt;GetAboutUsResponse xmlns="http://tempuri.org/" /&gt;');
    expect(about).toContain('<pre>GET /AboutUs.asmx/GetAboutUs? HTTP/1.1\r\nHost: school.example\r\n</pre>');
    // A void HTTP answer has no body, so its sample is the status line alone.
    expect(about.split('<pre>HTTP/1.1 200 OK\r\n</pre>').length - 1).toBe(2);
    expect(about).not.toContain('>Parameter</td>');
    expect(about).toContain('<input type="submit" value="Invoke" class="button">');
  });

  it('follows the configured namespace in the samples', async () => {
    const text = (await opPage('/AuthCodeSending.asmx?op=AuthCode', { xmlNamespace: 'urn:school:v1' })).text;
    expect(text).toContain('SOAPAction: "urn:school:v1/AuthCode"');
    expect(text).toContain('&lt;AuthCode xmlns="urn:school:v1"&gt;');
    expect(text).not.toContain('tempuri');
  });

  it('reads the op key without regard to case but the operation name with regard to it', async () => {
    expect((await opPage('/AuthCodeSending.asmx?OP=AuthCode')).text).toContain('<h2>AuthCode</h2>');
    const wrongCase = await opPage('/AuthCodeSending.asmx?op=authcode');
    expect(wrongCase.status).toBe(200);
    expect(wrongCase.text).toContain("Method 'authcode' was not found in service AuthCodeSending.");
  });

  it('answers an unknown operation with a method-not-found page', async () => {
    const res = await opPage('/GetStudnetsMarks.asmx?op=Nope');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('<h2>Method Not Found</h2>');
    expect(res.text).toContain("Method 'Nope' was not found in service GetStudnetsMarks.");
    expect(res.text).toContain('<a href="GetStudnetsMarks.asmx">here</a>');
    expect(res.text).not.toContain('<form');
    expect((await opPage('/GetStudnetsMarks.asmx?op=')).text).toContain("Method '' was not found in service GetStudnetsMarks.");
  });
});

describe('hostile input', () => {
  // Markup itself (`<script>`) never reaches the page: request validation refuses it (the legacy corpus's pages/dangerous-*).
  it('escapes the requested operation name', async () => {
    const res = await request(app).get('/AboutUs.asmx?op=a%3C1%3E%22%27%26x%C3%A9');
    expect(res.status).toBe(200);
    expect(res.text).toContain("Method 'a&lt;1&gt;&quot;&#39;&amp;x&#233;' was not found in service AboutUs.");
  });

  it.each(['/AboutUs.asmx', '/AboutUs.asmx?op=GetAboutUs', '/AboutUs.asmx?wsdl', '/AboutUs.asmx?disco'])(
    'keeps a hostile Host out of %s',
    async (urlPath) => {
      for (const [name, value, trust] of [
        ['Host', '"><script>alert(1)</script>', false],
        ['X-Forwarded-Host', "evil.example'><img src=x onerror=alert(1)>", true],
      ] as const) {
        const res = await request(appFor({ trustProxy: trust }))
          .get(urlPath)
          .set(name, value);
        expect(res.status).toBe(200);
        expect(res.text).not.toContain('<script>');
        expect(res.text).not.toContain('<img');
        expect(res.text).not.toContain('evil.example');
      }
    },
  );
});
