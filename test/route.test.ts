import { placeReader, routeReader } from '../src/contract/route';
import { readTarget } from '../src/contract/url';

/** The one reading of a URL (contract/route.ts) that routing, shadow traffic, metrics and logs share. */
const read = (method: string, url: string, base = '') => {
  const r = routeReader(base)({ method, url });
  return r === null ? null : [r.endpoint.name, r.operation, r.kind];
};

test('endpoint by name without regard to case; the operation as written; the kind by method', () => {
  expect(read('POST', '/authcodesending.ASMX')).toEqual(['AuthCodeSending', undefined, 'soap']);
  expect(read('GET', '/AboutUs.asmx?wsdl')).toEqual(['AboutUs', undefined, 'page']);
  expect(read('HEAD', '/AboutUs.asmx')).toEqual(['AboutUs', undefined, 'page']);
  expect(read('GET', '/AboutUs.asmx/getaboutus?x=1')).toEqual(['AboutUs', 'getaboutus', 'httpget']);
  expect(read('POST', '/AboutUs.asmx/GetAboutUs')).toEqual(['AboutUs', 'GetAboutUs', 'httppost']);
  expect(read('PUT', '/AboutUs.asmx/GetAboutUs')).toEqual(['AboutUs', 'GetAboutUs', undefined]);
  expect(read('GET', '/AboutUs.asmx/')).toEqual(['AboutUs', '', 'httpget']);
});

test('the path is %-decoded before it is read, absolute-form URLs included', () => {
  expect(read('GET', '/About%55s.asmx/Get%41boutUs')).toEqual(['AboutUs', 'GetAboutUs', 'httpget']);
  expect(read('GET', '/AboutUs.asmx%2FGetAboutUs')).toEqual(['AboutUs', 'GetAboutUs', 'httpget']);
  expect(read('GET', 'http://school.example/AboutUs.asmx')).toEqual(['AboutUs', undefined, 'page']);
});

test('under BASE_PATH only, matched without regard to case', () => {
  expect(read('GET', '/AboutUs.asmx', '/StudentService')).toBeNull();
  expect(read('GET', '/studentservice/AboutUs.asmx', '/StudentService')).toEqual(['AboutUs', undefined, 'page']);
  expect(read('GET', '/Student%53ervice/AboutUs.asmx', '/StudentService')).toEqual(['AboutUs', undefined, 'page']);
  // The base path is text, not a pattern.
  expect(read('GET', '/StudentXService/AboutUs.asmx', '/Student.Service')).toBeNull();
});

test('no route: another name, a nested path, a malformed escape', () => {
  expect(read('GET', '/Nothing.asmx')).toBeNull();
  expect(read('GET', '/x/AboutUs.asmx')).toBeNull();
  expect(read('GET', '/AboutUs.asmx.bak')).toBeNull();
  expect(read('GET', '/About%ZZUs.asmx')).toBeNull();
});

// contract/url.ts: http.sys's reading (KB 820129, KB 896287), then ASP.NET's VirtualPath.Create.
test('the path is read as IIS hands it to ASP.NET: slashes, dot segments, escapes, a fragment, a trimmed operation', () => {
  expect(read('GET', '//AboutUs.asmx')).toEqual(['AboutUs', undefined, 'page']);
  expect(read('GET', '/x/./../AboutUs.asmx//GetAboutUs')).toEqual(['AboutUs', 'GetAboutUs', 'httpget']);
  expect(read('GET', '/AboutUs.asmx\\GetAboutUs')).toEqual(['AboutUs', 'GetAboutUs', 'httpget']);
  expect(read('GET', '/x/%2E%2e/AboutUs.asmx%5cGet%u0041boutUs')).toEqual(['AboutUs', 'GetAboutUs', 'httpget']);
  expect(read('GET', '/AboutUs.asmx/GetAboutUs%20%C2%A0')).toEqual(['AboutUs', 'GetAboutUs', 'httpget']);
  expect(read('GET', '/AboutUs.asmx/GetAboutUs/')).toEqual(['AboutUs', 'GetAboutUs/', 'httpget']);
  expect(read('GET', '/AboutUs.asmx#x/GetAboutUs')).toEqual(['AboutUs', undefined, 'page']);
  expect(read('GET', '//studentservice/x/../AboutUs.asmx', '/StudentService')).toEqual(['AboutUs', undefined, 'page']);
});

test('what http.sys refuses, and what is no endpoint once canonical, has no route', () => {
  for (const url of [
    '/AboutUs.asmx%00',
    '/AboutUs.asmx/Get%7F',
    '/../AboutUs.asmx',
    '/x/../../AboutUs.asmx',
    `/AboutUs.asmx/${'a'.repeat(261)}`,
    '/AboutUs.asmx./GetAboutUs',
    '/AboutUs.asmx%20',
  ]) {
    expect([url, read('GET', url)]).toEqual([url, null]);
  }
  expect(readTarget('/AboutUs.asmx%00').invalid).toBe('control character in the URL path');
  expect(readTarget('/a/../../b').invalid).toBe('URL path goes above the root');
});

test('escapes are UTF-8, else the ANSI code page; the query is kept as sent, without a fragment', () => {
  expect(readTarget('/%D8%B9/%C3%A9').path).toBe('/\u0639/\u00e9');
  expect(readTarget('/%C0%AF%80').path).toBe('/\u00c0\u00af\u20ac');
  expect(readTarget('/a?x=%41+b#frag?y').query).toBe('x=%41+b');
  expect(readTarget('http://host:80/AboutUs.asmx?wsdl').path).toBe('/AboutUs.asmx');
});

test('where IIS sends a path: an endpoint and its PathInfo, another script, the application directory, anything else', () => {
  const at = placeReader('/StudentService');
  expect(at('/StudentService/AboutUs.asmx/x.asmx')).toMatchObject({ at: 'endpoint', pathInfo: '/x.asmx' });
  expect(at('/studentservice/ABOUTUS.ASMX')).toMatchObject({ at: 'endpoint', pathInfo: undefined });
  expect(at('/StudentService/Nothing.asmx').at).toBe('script');
  expect(at('/StudentService/x/AboutUs.asmx').at).toBe('script');
  expect(at('/AboutUs.asmx').at).toBe('script');
  expect(at('/StudentService/default.aspx/x').at).toBe('script');
  expect(at('/StudentService/').at).toBe('root');
  expect(at('/StudentService/AboutUs.asmx.bak').at).toBe('other');
  expect(at('/StudentService').at).toBe('other');
});
