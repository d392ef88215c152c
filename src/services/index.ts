import type { SmsIntake } from '../sms/intake';
import type { Store } from '../store/store';
import { type Args, ENDPOINTS, type Services } from '../contract/operations';
import type { Caller, Operation, StudentInfo } from '../contract/types';

/**
 * The five endpoints as plain typed objects: what each operation does, with no XML, HTTP or
 * node-soap in sight. The bindings call them with the caller and the arguments by their contract
 * names; what each method takes and answers is the contract's (`Args`, and `Services` below: a
 * method missing, a parameter misnamed or mistyped fails to compile).
 */

export class AuthCodeSending {
  constructor(private readonly intake: SmsIntake) {}

  /**
   * Texts the code to the phone. The answer is empty whatever happens: a request that is refused
   * (bad phone or code, a limit) is dropped; one that is accepted is durable before the answer.
   */
  async AuthCode(caller: Caller, { code, phone }: Args<'AuthCodeSending', 'AuthCode'>): Promise<void> {
    await this.intake.accept(code, phone, caller.clientAddress, caller.reqId);
  }
}

export class GetStudnetsMarks {
  /** The contract answers nothing; the legacy operation had no observable effect. */
  async GetStudentsMarks(_caller: Caller, _args: Args<'GetStudnetsMarks', 'GetStudentsMarks'>): Promise<void> {}
}

export class AboutUs {
  async GetAboutUs(_caller: Caller, _args: Args<'AboutUs', 'GetAboutUs'>): Promise<void> {}
}

export class NotificationNotes {
  constructor(private readonly store: Store) {}

  /** The school's students whose ShowActive is the given character, ordered by id_student. */
  GetStudentSchool(
    _caller: Caller,
    { school_base_url, show_active }: Args<'NotificationNotes', 'GetStudentSchool'>,
  ): Promise<StudentInfo[]> {
    return this.store.studentsOf(school_base_url, show_active);
  }
}

export class PushNotificationMobile {
  constructor(private readonly store: Store) {}

  /** The device's push token, null when the device is unknown. */
  GetTokenDevice(_caller: Caller, { id }: Args<'PushNotificationMobile', 'GetTokenDevice'>): Promise<string | null> {
    return this.store.deviceToken(id);
  }

  /** Answers nothing, as the contract says: the push credentials are never revealed. */
  async GetServerKeyAndSender(_caller: Caller, _args: Args<'PushNotificationMobile', 'GetServerKeyAndSender'>): Promise<void> {}
}

/** Endpoint name → operation name → implementation, as the bindings look them up. */
export type ServiceRegistry = ReadonlyMap<string, ReadonlyMap<string, Operation>>;

export function createServices(store: Store, intake: SmsIntake): ServiceRegistry {
  const services = {
    AuthCodeSending: new AuthCodeSending(intake),
    GetStudnetsMarks: new GetStudnetsMarks(),
    AboutUs: new AboutUs(),
    NotificationNotes: new NotificationNotes(store),
    PushNotificationMobile: new PushNotificationMobile(store),
  } satisfies Services;
  // By the contract's names (no reflection): the compiler has held each object to them above.
  return new Map(
    ENDPOINTS.map((endpoint) => {
      const object = services[endpoint.name as keyof typeof services] as unknown as Record<string, Operation>;
      return [endpoint.name, new Map(endpoint.operations.map((op) => [op.name, object[op.name]!.bind(object)]))];
    }),
  );
}
