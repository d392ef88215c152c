/**
 * The published way: node-soap + Express, serving the same WSDLs, with an in-memory implementation of
 * the same data set and no ASMX fidelity work at all. The benchmark's yardstick for "what node-soap
 * alone costs".
 *
 *   node .dev-build/scripts/bench/node-soap-baseline.js      (PORT from the environment)
 */
import '../../src/basics/supported-node';
import express from 'express';
import * as soap from 'soap';
import { WsdlCatalog } from '../../src/pages/wsdl';
import { benchDevices, benchStudents } from './workloads';
import { type CommandSpec, parseCommandLine } from '../../src/basics/command-line';

export function createNodeSoapApp(): express.Express {
  const students = new Map<string, { id_student: string; fullName: string; id_device: string; ShowActive: string }[]>();
  for (const s of benchStudents()) {
    const key = `${s.school} ${s.showActive}`;
    const list = students.get(key) ?? students.set(key, []).get(key)!;
    list.push({ id_student: s.id, fullName: s.fullName, id_device: s.device, ShowActive: s.showActive });
  }
  const tokens = new Map(benchDevices().map((d) => [d.id, d.token]));
  const outbox: { code: string; phone: string }[] = [];

  const GetTokenDevice = (args: { id?: string }) => ({ GetTokenDeviceResult: tokens.get(args.id ?? '') });
  const GetStudentSchool = (args: { school_base_url?: string; show_active?: string }) => ({
    GetStudentSchoolResult: { StudentInfo: students.get(`${args.school_base_url} ${String.fromCharCode(Number(args.show_active))}`) ?? [] },
  });
  const AuthCode = (args: { code: string; phone: string }) => {
    outbox.push(args);
    if (outbox.length > 10000) outbox.length = 0;
    return {};
  };
  const implementations: Record<string, soap.IServicePort> = {
    PushNotificationMobile: { GetTokenDevice, GetServerKeyAndSender: () => ({}) },
    NotificationNotes: { GetStudentSchool },
    AuthCodeSending: { AuthCode },
    AboutUs: { GetAboutUs: () => ({}) },
  };

  const catalog = new WsdlCatalog('http://tempuri.org/');
  const app = express();
  const port = process.env.PORT ?? '0';
  for (const [name, ops] of Object.entries(implementations)) {
    const path = `/${name}.asmx`;
    soap.listen(app, {
      path,
      services: { [name]: { [`${name}Soap`]: ops, [`${name}Soap12`]: ops } },
      xml: catalog.text(name, `http://127.0.0.1:${port}${path}`),
    });
  }
  return app;
}

/** Started by the benchmark (index.ts), not by hand. */
const COMMAND = {
  usage: ['PORT=N node .dev-build/scripts/bench/node-soap-baseline.js'],
  summary: ["The benchmark's yardstick: node-soap and Express as published, serving the same WSDLs from memory, on 127.0.0.1:PORT."],
  options: {},
} as const satisfies CommandSpec;

if (require.main === module) {
  const line = parseCommandLine(COMMAND, process.argv.slice(2));
  if (typeof line === 'number') process.exitCode = line;
  else {
    createNodeSoapApp().listen(Number(process.env.PORT), '127.0.0.1');
    process.on('SIGTERM', () => process.exit(0));
  }
}
