import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHECKED_WSDL_FILE, checkedAddress, checkKey, checkWsdl, contractMismatches, describeWsdl } from '../src/bindings/soap/node-soap';
import { loadConfig } from '../src/config';
import { ENDPOINTS } from '../src/contract/operations';
import { WsdlCatalog } from '../src/pages/wsdl';
import { copyInstall } from './helpers/install-copy';
import { BUILD_DIR } from './helpers/paths';

/**
 * node-soap through its public API only (src/bindings/soap/node-soap.ts): it reads each hand-written
 * WSDL, and what it describes must be the contract. What this relies on of node-soap (`soap.WSDL`,
 * `onReady`, `describeServices()` and how it writes the parameters) is held here, so a soap upgrade
 * that changes it fails by name; and a WSDL that parts from the contract fails the start.
 */
const catalog = new WsdlCatalog('http://tempuri.org/');
const wsdlOf = (name: string) => catalog.text(name, `http://localhost/${name}.asmx`);
const endpoint = (name: string) => ENDPOINTS.find((e) => e.name === name)!;

test.each(ENDPOINTS.map((e) => [e.name]))('%s.wsdl as served: node-soap reads it, and every SOAP port is the contract', async (name) => {
  const described = await describeWsdl(wsdlOf(name), `http://localhost/${name}.asmx`);
  expect(Object.keys(described[name] ?? {}).sort()).toEqual([`${name}Soap`, `${name}Soap12`]);
  expect(contractMismatches(described, endpoint(name))).toEqual([]);
});

test("node-soap describes a port's operation by its parameters, in order, with their schema types", async () => {
  const described = await describeWsdl(wsdlOf('NotificationNotes'), 'http://localhost/NotificationNotes.asmx');
  const input = described.NotificationNotes!.NotificationNotesSoap!.GetStudentSchool!.input!;
  expect(Object.entries(input).filter(([k]) => !k.startsWith('targetNS'))).toEqual([
    ['school_base_url', 's:string'],
    ['show_active', 'char|s:unsignedShort'],
  ]);
});

describe('a WSDL that parts from the contract fails the start, naming the operation', () => {
  const school = wsdlOf('NotificationNotes');
  test.each([
    [
      'a renamed part',
      school.replaceAll('name="school_base_url"', 'name="school_url"'),
      /GetStudentSchool takes \(school_url: s:string, show_active/,
    ],
    [
      'two parts swapped',
      school.replace(
        /(<s:element minOccurs="0" maxOccurs="1" name="school_base_url" type="s:string" \/>)\s*(<s:element minOccurs="1" maxOccurs="1" name="show_active" type="s1:char" \/>)/,
        '$2$1',
      ),
      /GetStudentSchool takes \(show_active: char\|s:unsignedShort, school_base_url: s:string\) where the contract says \(school_base_url/,
    ],
    [
      'a part of another type',
      school.replace('name="school_base_url" type="s:string"', 'name="school_base_url" type="s:int"'),
      /school_base_url: s:int/,
    ],
    ['an operation renamed', school.replaceAll('GetStudentSchool"', 'GetStudentSchools"'), /operation GetStudentSchool is missing/],
  ])('%s', async (_what, wsdl, message) => {
    expect(wsdl).not.toBe(school);
    await expect(checkWsdl(wsdl, endpoint('NotificationNotes'))).rejects.toThrow(message);
    await expect(checkWsdl(wsdl, endpoint('NotificationNotes'))).rejects.toThrow(
      /^wsdl\/NotificationNotes\.wsdl does not match the contract: /,
    );
  });
});

describe("the build's record: a start reads again only a WSDL the build did not check", () => {
  test('the build recorded every WSDL as a start with the default settings serves it, and nothing else', () => {
    const config = loadConfig({});
    const served = new WsdlCatalog(config.xmlNamespace, undefined, config.protocols);
    const record = JSON.parse(fs.readFileSync(path.join(BUILD_DIR, CHECKED_WSDL_FILE), 'utf8')) as { checked: string[] };
    expect(record.checked).toEqual(ENDPOINTS.map((e) => checkKey(served.text(e.name, checkedAddress(e.name)), e)));
  });

  test('a WSDL in the record is not read again; one not in it is, and a part renamed fails', async () => {
    const renamed = wsdlOf('NotificationNotes').replaceAll('name="school_base_url"', 'name="school_url"');
    const notes = endpoint('NotificationNotes');
    await expect(checkWsdl(renamed, notes, new Set([checkKey(renamed, notes)]))).resolves.toBeUndefined();
    await expect(checkWsdl(renamed, notes, new Set())).rejects.toThrow(/GetStudentSchool takes \(school_url: s:string/);
    // The key holds the contract too: the same text under another contract is read again.
    const other = { ...notes, operations: notes.operations.map((op) => ({ ...op, params: [...op.params].reverse() })) };
    expect(checkKey(renamed, other)).not.toBe(checkKey(renamed, notes));
  });

  test('the built service, its WSDL edited after the build: the start fails in one line naming the operation', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-wsdl-'));
    try {
      const build = copyInstall(dir, 'link');
      const file = path.join(dir, 'wsdl', 'NotificationNotes.wsdl');
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replaceAll('name="school_base_url"', 'name="school_url"'));
      const r = spawnSync(process.execPath, [path.join(build, 'src', 'main.js')], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', PORT: '0', ADMIN_PORT: '0', SQLITE_PATH: path.join(dir, 'school.db') },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/wsdl\/NotificationNotes\.wsdl does not match the contract: .*GetStudentSchool takes \(school_url/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
