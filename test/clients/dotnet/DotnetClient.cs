// The .NET Framework client, the way its users call the service: proxies made from the served ?wsdl by
// Mono's wsdl tool (the "Add Web Reference" path), one namespace P_<protocol>_<Endpoint> each, for SOAP,
// SOAP12, HttpGet and HttpPost, here driven through every operation. Built and run by run.sh; prints
// `FAIL dotnet <protocol> <operation>[ <case>]: ...` per failed check and `dotnet: N passed, M failed`.
using System;
using System.Linq;
using System.Net;
using System.Web.Services.Protocols;
using System.Xml;

public static class DotnetClient {
    const string Soap11Env = "http://schemas.xmlsoap.org/soap/envelope/";
    const string Soap12Env = "http://www.w3.org/2003/05/soap-envelope";
    const string Alnoor = "http://alnoor.school.example";
    const string AlnoorActive = "1001|Ali Hassan|dev-1001|1;1002|Zainab Kareem|dev-1002|1;1004|سارة محمد & <co>|dev-1004|1";
    const int TimeoutMs = 15000;
    static int passed, failed;

    static void Fail(string name, string why) {
        failed++;
        Console.WriteLine("FAIL dotnet " + name + ": " + why);
    }

    static string Describe(Exception e) {
        return e.GetType().Name + ": " + (e.Message ?? "").Split('\n')[0];
    }

    static string Show(object value) {
        return value == null ? "null" : "\"" + value + "\"";
    }

    /// Runs one call; an exception fails that check alone, so every message names its operation.
    static void Check(string name, Func<object> call, object want) {
        object got;
        try { got = call(); } catch (Exception e) { Fail(name, Describe(e)); return; }
        if (Equals(got, want)) passed++;
        else Fail(name, "got " + Show(got) + ", want " + Show(want));
    }

    static void Run(string name, Action call) {
        Check(name, () => { call(); return "ok"; }, "ok");
    }

    static void ExpectFault(string name, Action call, XmlQualifiedName code) {
        try { call(); } catch (SoapException e) {
            if (e.Code == code) passed++;
            else Fail(name, "fault code " + e.Code + ", want " + code + " (" + e.Message.Split('\n')[0] + ")");
            return;
        } catch (Exception e) { Fail(name, Describe(e) + " instead of a SOAP fault"); return; }
        Fail(name, "no fault");
    }

    /// HTTP GET/POST have no faults: a bad call is an HTTP 500 with ASMX's error text.
    static void ExpectHttpError(string name, Action call) {
        try { call(); } catch (WebException e) {
            var response = e.Response as HttpWebResponse;
            if (response != null && response.StatusCode == HttpStatusCode.InternalServerError) passed++;
            else Fail(name, "WebException " + e.Status + " (" + (response == null ? "no response" : ((int)response.StatusCode).ToString()) + "), want HTTP 500");
            return;
        } catch (Exception e) { Fail(name, Describe(e) + " instead of an HTTP 500"); return; }
        Fail(name, "no error");
    }

    /// Every protocol's proxy has its own StudentInfo class; they are read alike by reflection.
    static string Rows(Array items) {
        if (items == null) return null;
        return string.Join(";", items.Cast<object>().Select(x => {
            var t = x.GetType();
            Func<string, object> f = n => t.GetField(n) != null ? t.GetField(n).GetValue(x) : t.GetProperty(n).GetValue(x, null);
            return f("id_student") + "|" + f("fullName") + "|" + f("id_device") + "|" + f("ShowActive");
        }));
    }

    static T At<T>(T proxy, string url) where T : WebClientProtocol {
        proxy.Url = url;
        proxy.Timeout = TimeoutMs;
        return proxy;
    }

    public static int Main(string[] args) {
        ServicePointManager.DefaultConnectionLimit = 64;
        string b = args[0].TrimEnd('/');
        string push = b + "/PushNotificationMobile.asmx", notes = b + "/NotificationNotes.asmx";
        string auth = b + "/AuthCodeSending.asmx", marks = b + "/GetStudnetsMarks.asmx", about = b + "/AboutUs.asmx";

        // SOAP 1.1. System.Char is a char here; the proxy sends its UTF-16 code.
        {
            const string P = "SOAP ";
            Func<P_SOAP_PushNotificationMobile.PushNotificationMobile> p = () => At(new P_SOAP_PushNotificationMobile.PushNotificationMobile(), push);
            Func<P_SOAP_NotificationNotes.NotificationNotes> n = () => At(new P_SOAP_NotificationNotes.NotificationNotes(), notes);
            Check(P + "GetTokenDevice", () => p().GetTokenDevice("dev-1001"), "fcm:APA91bH-token-1001");
            Check(P + "GetTokenDevice escaped", () => p().GetTokenDevice("dev-1004"), "tok<&>\"quoted\"");
            Check(P + "GetTokenDevice arabic", () => p().GetTokenDevice("dev-3001"), "رمز-3001");
            Check(P + "GetTokenDevice unknown", () => p().GetTokenDevice("no-such-device"), null);
            Check(P + "GetTokenDevice empty token", () => p().GetTokenDevice("dev-empty"), "");
            Run(P + "GetServerKeyAndSender", () => p().GetServerKeyAndSender());
            Check(P + "GetStudentSchool", () => Rows(n().GetStudentSchool(Alnoor, '1')), AlnoorActive);
            Check(P + "GetStudentSchool inactive", () => Rows(n().GetStudentSchool(Alnoor, '0')), "1003|Omar Adel|dev-1003|0");
            Check(P + "GetStudentSchool arabic school", () => Rows(n().GetStudentSchool("http://مدرسة.example", '1')), "3001|نور الهدى|dev-3001|1");
            Check(P + "GetStudentSchool empty device", () => Rows(n().GetStudentSchool("http://rafidain.school.example", '1')), "2001|Mustafa Jalal||1");
            Check(P + "GetStudentSchool empty", () => Rows(n().GetStudentSchool("http://nowhere.example", '1')), "");
            Check(P + "GetStudentSchool large", () => n().GetStudentSchool("http://big.school.example", '1').Length, 500);
            Run(P + "AuthCode", () => At(new P_SOAP_AuthCodeSending.AuthCodeSending(), auth).AuthCode("4821", "+9647701234567"));
            Run(P + "GetStudentsMarks", () => At(new P_SOAP_GetStudnetsMarks.GetStudnetsMarks(), marks).GetStudentsMarks("1001", "MATH-7"));
            Run(P + "GetAboutUs", () => At(new P_SOAP_AboutUs.AboutUs(), about).GetAboutUs());
            // A proxy pointed at the wrong endpoint sends a SOAPAction that endpoint does not know.
            ExpectFault(P + "GetTokenDevice fault", () => At(new P_SOAP_PushNotificationMobile.PushNotificationMobile(), notes).GetTokenDevice("x"),
                new XmlQualifiedName("Client", Soap11Env));
        }

        // SOAP 1.2.
        {
            const string P = "SOAP12 ";
            Func<P_SOAP12_PushNotificationMobile.PushNotificationMobile> p = () => At(new P_SOAP12_PushNotificationMobile.PushNotificationMobile(), push);
            Func<P_SOAP12_NotificationNotes.NotificationNotes> n = () => At(new P_SOAP12_NotificationNotes.NotificationNotes(), notes);
            Check(P + "GetTokenDevice", () => p().GetTokenDevice("dev-1002"), "fcm:APA91bH-token-1002");
            Check(P + "GetTokenDevice escaped", () => p().GetTokenDevice("dev-1004"), "tok<&>\"quoted\"");
            Check(P + "GetTokenDevice arabic", () => p().GetTokenDevice("dev-3001"), "رمز-3001");
            Check(P + "GetTokenDevice unknown", () => p().GetTokenDevice("no-such-device"), null);
            Check(P + "GetTokenDevice empty token", () => p().GetTokenDevice("dev-empty"), "");
            Run(P + "GetServerKeyAndSender", () => p().GetServerKeyAndSender());
            Check(P + "GetStudentSchool", () => Rows(n().GetStudentSchool(Alnoor, '1')), AlnoorActive);
            Check(P + "GetStudentSchool inactive", () => Rows(n().GetStudentSchool(Alnoor, '0')), "1003|Omar Adel|dev-1003|0");
            Check(P + "GetStudentSchool arabic school", () => Rows(n().GetStudentSchool("http://مدرسة.example", '1')), "3001|نور الهدى|dev-3001|1");
            Check(P + "GetStudentSchool empty device", () => Rows(n().GetStudentSchool("http://rafidain.school.example", '1')), "2001|Mustafa Jalal||1");
            Check(P + "GetStudentSchool empty", () => Rows(n().GetStudentSchool("http://nowhere.example", '1')), "");
            Check(P + "GetStudentSchool large", () => n().GetStudentSchool("http://big.school.example", '1').Length, 500);
            Run(P + "AuthCode", () => At(new P_SOAP12_AuthCodeSending.AuthCodeSending(), auth).AuthCode("4821", "+9647701234567"));
            Run(P + "GetStudentsMarks", () => At(new P_SOAP12_GetStudnetsMarks.GetStudnetsMarks(), marks).GetStudentsMarks("1001", "MATH-7"));
            Run(P + "GetAboutUs", () => At(new P_SOAP12_AboutUs.AboutUs(), about).GetAboutUs());
            ExpectFault(P + "GetTokenDevice fault", () => At(new P_SOAP12_PushNotificationMobile.PushNotificationMobile(), notes).GetTokenDevice("x"),
                new XmlQualifiedName("Sender", Soap12Env));
        }

        // HTTP GET: every parameter is a string, the char included. The proxy escapes non-ASCII characters
        // the IIS way, %uXXXX (as .NET Framework's does), not as UTF-8 bytes.
        {
            const string P = "HttpGet ";
            Func<P_HttpGet_PushNotificationMobile.PushNotificationMobile> p = () => At(new P_HttpGet_PushNotificationMobile.PushNotificationMobile(), push);
            Func<P_HttpGet_NotificationNotes.NotificationNotes> n = () => At(new P_HttpGet_NotificationNotes.NotificationNotes(), notes);
            Check(P + "GetTokenDevice", () => p().GetTokenDevice("dev-1001"), "fcm:APA91bH-token-1001");
            Check(P + "GetTokenDevice escaped", () => p().GetTokenDevice("dev-1004"), "tok<&>\"quoted\"");
            Check(P + "GetTokenDevice arabic", () => p().GetTokenDevice("dev-3001"), "رمز-3001");
            Check(P + "GetTokenDevice unknown", () => p().GetTokenDevice("no-such-device"), null);
            Check(P + "GetTokenDevice empty token", () => p().GetTokenDevice("dev-empty"), "");
            Run(P + "GetServerKeyAndSender", () => p().GetServerKeyAndSender());
            Check(P + "GetStudentSchool", () => Rows(n().GetStudentSchool(Alnoor, "1")), AlnoorActive);
            Check(P + "GetStudentSchool inactive", () => Rows(n().GetStudentSchool(Alnoor, "0")), "1003|Omar Adel|dev-1003|0");
            Check(P + "GetStudentSchool arabic school", () => Rows(n().GetStudentSchool("http://مدرسة.example", "1")), "3001|نور الهدى|dev-3001|1");
            Check(P + "GetStudentSchool empty", () => Rows(n().GetStudentSchool("http://nowhere.example", "1")), "");
            Run(P + "AuthCode", () => At(new P_HttpGet_AuthCodeSending.AuthCodeSending(), auth).AuthCode("4821", "+9647701234567"));
            Run(P + "GetStudentsMarks", () => At(new P_HttpGet_GetStudnetsMarks.GetStudnetsMarks(), marks).GetStudentsMarks("1001", "MATH-7"));
            Run(P + "GetAboutUs", () => At(new P_HttpGet_AboutUs.AboutUs(), about).GetAboutUs());
            ExpectHttpError(P + "GetStudentSchool error", () => n().GetStudentSchool("x", "11"));
        }

        // HTTP POST.
        {
            const string P = "HttpPost ";
            Func<P_HttpPost_PushNotificationMobile.PushNotificationMobile> p = () => At(new P_HttpPost_PushNotificationMobile.PushNotificationMobile(), push);
            Func<P_HttpPost_NotificationNotes.NotificationNotes> n = () => At(new P_HttpPost_NotificationNotes.NotificationNotes(), notes);
            Check(P + "GetTokenDevice", () => p().GetTokenDevice("dev-1001"), "fcm:APA91bH-token-1001");
            Check(P + "GetTokenDevice escaped", () => p().GetTokenDevice("dev-1004"), "tok<&>\"quoted\"");
            Check(P + "GetTokenDevice arabic", () => p().GetTokenDevice("dev-3001"), "رمز-3001");
            Check(P + "GetTokenDevice unknown", () => p().GetTokenDevice("no-such-device"), null);
            Run(P + "GetServerKeyAndSender", () => p().GetServerKeyAndSender());
            Check(P + "GetStudentSchool", () => Rows(n().GetStudentSchool(Alnoor, "1")), AlnoorActive);
            Check(P + "GetStudentSchool arabic school", () => Rows(n().GetStudentSchool("http://مدرسة.example", "1")), "3001|نور الهدى|dev-3001|1");
            Check(P + "GetStudentSchool empty device", () => Rows(n().GetStudentSchool("http://rafidain.school.example", "1")), "2001|Mustafa Jalal||1");
            Check(P + "GetStudentSchool empty", () => Rows(n().GetStudentSchool("http://nowhere.example", "1")), "");
            Check(P + "GetStudentSchool large", () => n().GetStudentSchool("http://big.school.example", "1").Length, 500);
            Run(P + "AuthCode", () => At(new P_HttpPost_AuthCodeSending.AuthCodeSending(), auth).AuthCode("4821", "+9647701234567"));
            Run(P + "GetStudentsMarks", () => At(new P_HttpPost_GetStudnetsMarks.GetStudnetsMarks(), marks).GetStudentsMarks("1001", "MATH-7"));
            Run(P + "GetAboutUs", () => At(new P_HttpPost_AboutUs.AboutUs(), about).GetAboutUs());
            ExpectHttpError(P + "GetStudentSchool error", () => n().GetStudentSchool("x", "11"));
        }

        Console.WriteLine("dotnet: " + passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
