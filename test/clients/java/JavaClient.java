// Java's JAX-WS client, the way its users call the service: proxies generated from the served ?wsdl
// by wsimport (one package per endpoint, p_<Endpoint>), here driven through the SOAP 1.1 and SOAP 1.2
// ports. The HttpGet/HttpPost ports are not exercised: the JAX-WS runtime only speaks SOAP.
// Built and run by run.sh; prints `FAIL java <port> <operation>[ <case>]: ...` per failed check and
// `java: N passed, M failed`.
import java.net.URL;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import javax.xml.namespace.QName;
import javax.xml.ws.BindingProvider;
import javax.xml.ws.soap.SOAPFaultException;

public final class JavaClient {
    private static final String SOAP11_ENV = "http://schemas.xmlsoap.org/soap/envelope/";
    private static final String SOAP12_ENV = "http://www.w3.org/2003/05/soap-envelope";
    private static final String ALNOOR = "http://alnoor.school.example";
    private static final String ALNOOR_ACTIVE =
        "1001|Ali Hassan|dev-1001|1;1002|Zainab Kareem|dev-1002|1;1004|سارة محمد & <co>|dev-1004|1";

    private static int passed;
    private static int failed;

    private static void fail(String name, String why) {
        failed++;
        System.out.println("FAIL java " + name + ": " + why);
    }

    private static String describe(Throwable e) {
        String message = e.getMessage() == null ? "" : e.getMessage().split("\n")[0];
        return e.getClass().getSimpleName() + ": " + message;
    }

    /** Runs one call; an exception fails that check alone, so every message names its operation. */
    private static void check(String name, Callable<Object> call, Object want) {
        Object got;
        try {
            got = call.call();
        } catch (Throwable e) {
            fail(name, describe(e));
            return;
        }
        if (Objects.equals(got, want)) passed++;
        else fail(name, "got " + show(got) + ", want " + show(want));
    }

    private static void expectFault(String name, Callable<Object> call, QName code) {
        Object got;
        try {
            got = call.call();
        } catch (SOAPFaultException e) {
            QName actual = e.getFault().getFaultCodeAsQName();
            if (code.equals(actual)) passed++;
            else fail(name, "fault code " + actual + ", want " + code + " (" + e.getFault().getFaultString() + ")");
            return;
        } catch (Throwable e) {
            fail(name, describe(e) + " instead of a SOAP fault");
            return;
        }
        fail(name, "no fault, got " + show(got));
    }

    private static String show(Object value) {
        return value == null ? "null" : "\"" + value + "\"";
    }

    /** A proxy for one port, with timeouts so that a hung service fails the check instead of the run. */
    private static <T> T port(T proxy) {
        var context = ((BindingProvider) proxy).getRequestContext();
        context.put("com.sun.xml.ws.connect.timeout", 15_000);
        context.put("com.sun.xml.ws.request.timeout", 15_000);
        return proxy;
    }

    private static String rows(p_NotificationNotes.ArrayOfStudentInfo list) {
        if (list == null) return null;
        List<p_NotificationNotes.StudentInfo> items = list.getStudentInfo();
        return items.stream()
            .map(s -> s.getIdStudent() + "|" + s.getFullName() + "|" + s.getIdDevice() + "|" + s.getShowActive())
            .collect(Collectors.joining(";"));
    }

    /** The proxies of one SOAP version: the same interface, reached through the Soap or the Soap12 port. */
    private record Ports(
        p_PushNotificationMobile.PushNotificationMobileSoap push,
        p_NotificationNotes.NotificationNotesSoap notes,
        p_AuthCodeSending.AuthCodeSendingSoap auth,
        p_GetStudnetsMarks.GetStudnetsMarksSoap marks,
        p_AboutUs.AboutUsSoap about) {}

    private static Ports ports(String base, boolean soap12) throws Exception {
        var push = new p_PushNotificationMobile.PushNotificationMobile(new URL(base + "/PushNotificationMobile.asmx?wsdl"));
        var notes = new p_NotificationNotes.NotificationNotes(new URL(base + "/NotificationNotes.asmx?wsdl"));
        var auth = new p_AuthCodeSending.AuthCodeSending(new URL(base + "/AuthCodeSending.asmx?wsdl"));
        var marks = new p_GetStudnetsMarks.GetStudnetsMarks(new URL(base + "/GetStudnetsMarks.asmx?wsdl"));
        var about = new p_AboutUs.AboutUs(new URL(base + "/AboutUs.asmx?wsdl"));
        return soap12
            ? new Ports(port(push.getPushNotificationMobileSoap12()), port(notes.getNotificationNotesSoap12()),
                port(auth.getAuthCodeSendingSoap12()), port(marks.getGetStudnetsMarksSoap12()), port(about.getAboutUsSoap12()))
            : new Ports(port(push.getPushNotificationMobileSoap()), port(notes.getNotificationNotesSoap()),
                port(auth.getAuthCodeSendingSoap()), port(marks.getGetStudnetsMarksSoap()), port(about.getAboutUsSoap()));
    }

    public static void main(String[] args) {
        String base = args[0].replaceAll("/+$", "");
        for (boolean soap12 : new boolean[] {false, true}) {
            String tag = soap12 ? "Soap12" : "Soap";
            QName faultCode = soap12 ? new QName(SOAP12_ENV, "Sender") : new QName(SOAP11_ENV, "Client");
            Ports p;
            try {
                p = ports(base, soap12);
            } catch (Throwable e) {
                // The runtime reads every WSDL when the services are created; name all six operations.
                fail(tag + " AuthCode GetStudentsMarks GetAboutUs GetStudentSchool GetTokenDevice GetServerKeyAndSender",
                    "cannot build the proxies: " + describe(e));
                continue;
            }
            check(tag + " GetTokenDevice", () -> p.push().getTokenDevice("dev-1001"), "fcm:APA91bH-token-1001");
            check(tag + " GetTokenDevice escaped", () -> p.push().getTokenDevice("dev-1004"), "tok<&>\"quoted\"");
            check(tag + " GetTokenDevice arabic", () -> p.push().getTokenDevice("dev-3001"), "رمز-3001");
            check(tag + " GetTokenDevice unknown", () -> p.push().getTokenDevice("no-such-device"), null);
            check(tag + " GetTokenDevice empty token", () -> p.push().getTokenDevice("dev-empty"), "");
            check(tag + " GetServerKeyAndSender", () -> { p.push().getServerKeyAndSender(); return "ok"; }, "ok");

            // System.Char travels as its UTF-16 code: wsimport maps the WSDL's unsignedShort to int.
            check(tag + " GetStudentSchool", () -> rows(p.notes().getStudentSchool(ALNOOR, '1')), ALNOOR_ACTIVE);
            check(tag + " GetStudentSchool inactive", () -> rows(p.notes().getStudentSchool(ALNOOR, '0')),
                "1003|Omar Adel|dev-1003|0");
            check(tag + " GetStudentSchool arabic school",
                () -> rows(p.notes().getStudentSchool("http://مدرسة.example", '1')), "3001|نور الهدى|dev-3001|1");
            check(tag + " GetStudentSchool empty device",
                () -> rows(p.notes().getStudentSchool("http://rafidain.school.example", '1')), "2001|Mustafa Jalal||1");
            check(tag + " GetStudentSchool empty", () -> rows(p.notes().getStudentSchool("http://nowhere.example", '1')), "");
            check(tag + " GetStudentSchool large",
                () -> p.notes().getStudentSchool("http://big.school.example", '1').getStudentInfo().size(), 500);
            // 65536 does not fit a char: the service must answer with a client-side fault.
            expectFault(tag + " GetStudentSchool fault", () -> p.notes().getStudentSchool("x", 65536), faultCode);

            check(tag + " AuthCode", () -> { p.auth().authCode("4821", "+9647701234567"); return "ok"; }, "ok");
            check(tag + " GetStudentsMarks", () -> { p.marks().getStudentsMarks("1001", "MATH-7"); return "ok"; }, "ok");
            check(tag + " GetAboutUs", () -> { p.about().getAboutUs(); return "ok"; }, "ok");
        }
        System.out.println("java: " + passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
