"""python zeep, the way its users call the service: a client built from the served ?wsdl, bound to the
SOAP 1.1 port and then the SOAP 1.2 port, every operation checked against the fixture data set
(test/fixtures/data). Run with Debian's interpreter, which has python3-zeep:

    /usr/bin/python3 test/clients/zeep_client.py http://127.0.0.1:8080

Prints one `FAIL zeep <port> <operation>[ <case>]: ...` line per failed check and ends with
`zeep: N passed, M failed`; exits 1 when anything failed.
"""
import sys

from zeep import Client, Settings
from zeep.exceptions import Fault
from zeep.transports import Transport

BASE = sys.argv[1].rstrip('/')
ALNOOR = 'http://alnoor.school.example'
ALNOOR_ACTIVE = [
    ('1001', 'Ali Hassan', 'dev-1001', '1'),
    ('1002', 'Zainab Kareem', 'dev-1002', '1'),
    ('1004', 'سارة محمد & <co>', 'dev-1004', '1'),
]

passed = failed = 0


def fail(name, why):
    global failed
    failed += 1
    print(f'FAIL zeep {name}: {why}', flush=True)


def check(name, call, want):
    """Runs one call; an exception fails that check alone, so every message names its operation."""
    global passed
    try:
        got = call()
    except Exception as e:  # noqa: BLE001 - any client error is this check's failure
        fail(name, f'{type(e).__name__}: {e}')
        return
    if got == want:
        passed += 1
    else:
        fail(name, f'got {got!r}, want {want!r}')


def expect_fault(name, call, code):
    global passed
    try:
        got = call()
    except Fault as f:
        if f.code == code:
            passed += 1
        else:
            fail(name, f'fault code {f.code!r}, want {code!r} ({f.message})')
        return
    except Exception as e:  # noqa: BLE001
        fail(name, f'{type(e).__name__} instead of a SOAP fault: {e}')
        return
    fail(name, f'no fault, got {got!r}')


def rows(result):
    return [(s.id_student, s.fullName, s.id_device, s.ShowActive) for s in (result or [])]


# strict=True: zeep rejects any answer that does not match the served schema, which is the point.
settings = Settings(strict=True)
transport = Transport(timeout=15)
documents = {}


def service(svc, port):
    """A proxy for one endpoint's port; the WSDL is read once per endpoint."""
    if svc not in documents:
        documents[svc] = Client(f'{BASE}/{svc}.asmx?wsdl', settings=settings, transport=transport)
    return documents[svc].bind(svc, f'{svc}{port}')


for port, fault_code in (('Soap', 'soap:Client'), ('Soap12', 'soap:Sender')):
    push = lambda: service('PushNotificationMobile', port)  # noqa: E731 - lazy, so a bad WSDL fails per check
    notes = lambda: service('NotificationNotes', port)  # noqa: E731

    check(f'{port} GetTokenDevice', lambda: push().GetTokenDevice(id='dev-1001'), 'fcm:APA91bH-token-1001')
    check(f'{port} GetTokenDevice escaped', lambda: push().GetTokenDevice(id='dev-1004'), 'tok<&>"quoted"')
    check(f'{port} GetTokenDevice arabic', lambda: push().GetTokenDevice(id='dev-3001'), 'رمز-3001')
    check(f'{port} GetTokenDevice unknown', lambda: push().GetTokenDevice(id='no-such-device'), None)
    check(f'{port} GetServerKeyAndSender', lambda: push().GetServerKeyAndSender(), None)

    # System.Char travels as its UTF-16 code: the proxy takes an int, as the WSDL's unsignedShort says.
    check(f'{port} GetStudentSchool',
          lambda: rows(notes().GetStudentSchool(school_base_url=ALNOOR, show_active=ord('1'))), ALNOOR_ACTIVE)
    check(f'{port} GetStudentSchool inactive',
          lambda: rows(notes().GetStudentSchool(school_base_url=ALNOOR, show_active=ord('0'))),
          [('1003', 'Omar Adel', 'dev-1003', '0')])
    check(f'{port} GetStudentSchool arabic school',
          lambda: rows(notes().GetStudentSchool(school_base_url='http://مدرسة.example', show_active=ord('1'))),
          [('3001', 'نور الهدى', 'dev-3001', '1')])
    check(f'{port} GetStudentSchool empty',
          lambda: rows(notes().GetStudentSchool(school_base_url='http://nowhere.example', show_active=ord('1'))), [])
    check(f'{port} GetStudentSchool large',
          lambda: len(rows(notes().GetStudentSchool(school_base_url='http://big.school.example', show_active=ord('1')))),
          500)
    # 65536 does not fit a char: the service must answer with a client-side fault, not an error page.
    expect_fault(f'{port} GetStudentSchool fault',
                 lambda: notes().GetStudentSchool(school_base_url='x', show_active=65536), fault_code)

    check(f'{port} AuthCode',
          lambda: service('AuthCodeSending', port).AuthCode(code='4821', phone='+9647701234567'), None)
    check(f'{port} GetStudentsMarks',
          lambda: service('GetStudnetsMarks', port).GetStudentsMarks(StudnetID='1001', SubjectID='MATH-7'), None)
    check(f'{port} GetAboutUs', lambda: service('AboutUs', port).GetAboutUs(), None)

print(f'zeep: {passed} passed, {failed} failed', flush=True)
sys.exit(1 if failed else 0)
