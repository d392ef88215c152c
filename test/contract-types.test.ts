import { type Args, ENDPOINTS, type Services } from '../src/contract/operations';
import type { Caller, StudentInfo } from '../src/contract/types';
import { createServices } from '../src/services';

/**
 * The contract typed end to end (src/contract/operations.ts): a service that parts from it fails to
 * compile. Each `@ts-expect-error` below is checked by `tsc` (npm test runs it first, over test/ too):
 * should the mistake under it ever compile, the directive itself is the error.
 */
const caller: Caller = { reqId: '', clientAddress: null };
const noStudents = async (): Promise<StudentInfo[]> => [];

const misnamed = {
  NotificationNotes: {
    // @ts-expect-error a parameter that is not the contract's (school_url for school_base_url)
    GetStudentSchool: async (_c: Caller, _a: { school_url: string | null; show_active: string }) => noStudents(),
  },
} satisfies Pick<Services, 'NotificationNotes'>;

const swapped = {
  NotificationNotes: {
    // @ts-expect-error the two parameters' types swapped: the URL may be absent (null), the char never is
    GetStudentSchool: async (_c: Caller, _a: { school_base_url: string; show_active: string | null }) => noStudents(),
  },
} satisfies Pick<Services, 'NotificationNotes'>;

// @ts-expect-error an operation missing (GetServerKeyAndSender)
const missing = { PushNotificationMobile: { GetTokenDevice: async () => null } } satisfies Pick<Services, 'PushNotificationMobile'>;

const wrongResult = {
  PushNotificationMobile: {
    // @ts-expect-error a result of another type than the contract's (a string or null)
    GetTokenDevice: async (_c: Caller, _a: Args<'PushNotificationMobile', 'GetTokenDevice'>) => 42,
    GetServerKeyAndSender: async () => undefined,
  },
} satisfies Pick<Services, 'PushNotificationMobile'>;

// Each is what the compiler refuses; none runs.
void [misnamed, swapped, missing, wrongResult];

test('the services answer by the contract: every operation of every endpoint is there, found by its name', async () => {
  const store = { studentsOf: async () => [], deviceToken: async (id: string | null) => (id === 'dev-1' ? 'fcm:1' : null) };
  const services = createServices(store as never, { accept: async () => undefined } as never);
  for (const endpoint of ENDPOINTS)
    expect([...(services.get(endpoint.name)?.keys() ?? [])]).toEqual(endpoint.operations.map((o) => o.name));
  expect(await services.get('PushNotificationMobile')!.get('GetTokenDevice')!(caller, { id: 'dev-1' })).toBe('fcm:1');
});
