import { routeReader } from '../src/contract/route';

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
