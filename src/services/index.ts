import type { SmsIntake } from '../sms/intake';
import type { Store } from '../store/store';
import type { Caller, Operation, StudentInfo } from '../contract/types';

/**
 * The five endpoints as plain typed objects: what each operation does, with no XML, HTTP or
 * node-soap in sight. The bindings call them with the caller, then the arguments in contract order.
 */

export class AuthCodeSending {
  constructor(private readonly intake: SmsIntake) {}

  /**
   * Texts the code to the phone. The answer is empty whatever happens: a request that is refused
   * (bad phone or code, a limit) is dropped; one that is accepted is durable before the answer.
   */
  async AuthCode(caller: Caller, code: string | null, phone: string | null): Promise<void> {
    await this.intake.accept(code, phone, caller.clientAddress, caller.reqId);
  }
}

export class GetStudnetsMarks {
  /** The contract answers nothing; the legacy operation had no observable effect. */
  async GetStudentsMarks(_caller: Caller, _studnetId: string | null, _subjectId: string | null): Promise<void> {}
}

export class AboutUs {
  async GetAboutUs(_caller: Caller): Promise<void> {}
}

export class NotificationNotes {
  constructor(private readonly store: Store) {}

  /** The school's students whose ShowActive is the given character, ordered by id_student. */
  GetStudentSchool(_caller: Caller, schoolBaseUrl: string | null, showActive: string): Promise<StudentInfo[]> {
    return this.store.studentsOf(schoolBaseUrl, showActive);
  }
}

export class PushNotificationMobile {
  constructor(private readonly store: Store) {}

  /** The device's push token, null when the device is unknown. */
  GetTokenDevice(_caller: Caller, id: string | null): Promise<string | null> {
    return this.store.deviceToken(id);
  }

  /** Answers nothing, as the contract says: the push credentials are never revealed. */
  async GetServerKeyAndSender(_caller: Caller): Promise<void> {}
}

/** Endpoint name → operation name → implementation, as the bindings look them up. */
export type ServiceRegistry = ReadonlyMap<string, ReadonlyMap<string, Operation>>;

export function createServices(store: Store, intake: SmsIntake): ServiceRegistry {
  const objects: object[] = [
    new AuthCodeSending(intake),
    new GetStudnetsMarks(),
    new AboutUs(),
    new NotificationNotes(store),
    new PushNotificationMobile(store),
  ];
  return new Map(
    objects.map((obj) => {
      const proto = Object.getPrototypeOf(obj) as object;
      const ops = Object.getOwnPropertyNames(proto)
        .filter((name) => name !== 'constructor')
        .map((name): [string, Operation] => {
          const fn = (obj as Record<string, Operation>)[name];
          return [name, fn.bind(obj)];
        });
      return [obj.constructor.name, new Map(ops)];
    }),
  );
}
